// What a long run is doing now, for progress lines on stderr: the outermost while loop that is
// running and the trip it is on ("while.7 trip 12": the decode step of a generate loop, the
// time step of a solver). Every executor of while loops (the evaluator, the cpu, gpu-emulation
// and systolic backends) opens a LoopProgressScope per loop it runs; only the outermost is
// reported, and a trip costs one relaxed atomic store.
//
// Process-wide and advisory: runs in parallel threads share it, and then the line may name
// either's loop. It never affects what runs.
#pragma once

#include <cstdint>
#include <string>

namespace hlo {

class LoopProgressScope {
 public:
  // `loop_name` must outlive the scope (an instruction's or a thunk's name).
  explicit LoopProgressScope(const std::string& loop_name);
  ~LoopProgressScope();
  LoopProgressScope(const LoopProgressScope&) = delete;
  LoopProgressScope& operator=(const LoopProgressScope&) = delete;
  void Trip(int64_t trip);  // the trip about to run, from 0

 private:
  bool outermost_;
};

// "while.7 trip 12", or empty when no loop is running.
std::string CurrentLoopProgress();

}  // namespace hlo
