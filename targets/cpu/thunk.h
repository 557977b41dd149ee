// The CPU backend's runtime: a compiled computation is a ThunkSequence — a buffer table plus a
// list of thunks (generated-kernel launches, GEMM/convolution calls, control flow, runtime
// routines) run in schedule order.
//
// Guarantees:
//   - Every array value of the computation has one buffer id. Buffers of instructions are owned
//     by the sequence (allocated once at compile time, reused by every run); parameter buffers
//     are bound to the caller's memory before each run (no copy); tuple / get-tuple-element /
//     bitcast / opt-barrier results are aliases (the same id as their source).
//   - A thunk reads only buffers of instructions scheduled before it and writes only its own
//     instruction's buffers, so running thunks in order computes the computation.
//   - Run never aborts on bad data: runtime failures (e.g. a while loop beyond
//     hlo::GlobalLimits().max_while_iterations) throw hlo::Error naming the instruction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "targets/cpu/buffers.h"
#include "targets/cpu/thread_pool.h"

namespace hlo {
struct DeviceView;  // hlo/collective_runtime.h
}

namespace cpu {

class ThunkSequence;

// A generated function other than a kernel or an epilogue (a sort comparator): its symbol in
// the LLVM module, and its address once the JIT compiled it.
struct JitFunction {
  std::string symbol;
  void* address = nullptr;
};

// Per-run state shared by every thunk: the thread pool and the per-kernel time profile.
struct RunContext {
  ThreadPool* pool = nullptr;
  // The device this run is in a multi-device run; nullptr: the only one. Collectives (run by
  // evaluator thunks) meet the other devices through it.
  const hlo::DeviceView* device = nullptr;
  bool profile = true;
  std::map<std::string, double>* kernel_ms = nullptr;  // thunk name -> ms, accumulated
  // How while loops ran: compiled (compiled_loop.h) or thunk by thunk (profile "loops.*").
  int64_t compiled_loops = 0, thunk_loops = 0;
  // Thunks a compiled loop ran through its callback (everything it does not call directly).
  int64_t loop_callback_thunks = 0;
};

class Thunk {
 public:
  explicit Thunk(std::string name) : name_(std::move(name)) {}
  virtual ~Thunk() = default;
  const std::string& name() const { return name_; }
  // "kernel", "gemm", "conv", "while", "fallback", ...: the profile counters group by it.
  virtual const char* kind() const = 0;
  virtual void Run(ThunkSequence& sequence, RunContext& context) = 0;

 private:
  std::string name_;
};

class ThunkSequence {
 public:
  explicit ThunkSequence(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // Buffer table. An owned buffer is allocated now; a bound one gets its pointer from Bind.
  int64_t AddOwnedBuffer(int64_t bytes);
  int64_t AddBoundBuffer();
  uint8_t* buffer(int64_t id) const { return pointers_[static_cast<size_t>(id)]; }
  int64_t buffer_count() const { return static_cast<int64_t>(pointers_.size()); }
  bool is_bound(int64_t id) const { return owned_[static_cast<size_t>(id)] == nullptr; }
  int64_t owned_size(int64_t id) const {
    return is_bound(id) ? 0 : owned_[static_cast<size_t>(id)]->size();
  }
  // Buffers whose contents are set at compile time (constants): never redirected.
  void MarkPreset(int64_t id) { preset_.insert(id); }
  bool is_preset(int64_t id) const { return preset_.count(id) > 0; }
  // Points owned buffer `id` at `memory` (nullptr: back at its own storage) so the thunks of
  // the next runs write there: the executable lends the result literal's memory to the root.
  void Redirect(int64_t id, uint8_t* memory) {
    const auto slot = static_cast<size_t>(id);
    pointers_[slot] = memory != nullptr ? memory : owned_[slot]->data();
  }

  void AddThunk(std::unique_ptr<Thunk> thunk) { thunks_.push_back(std::move(thunk)); }
  const std::vector<std::unique_ptr<Thunk>>& thunks() const { return thunks_; }

  std::vector<ValueLayout>& mutable_parameters() {
    leaf_ids_ready_ = false;
    return parameters_;
  }
  const std::vector<ValueLayout>& parameters() const { return parameters_; }
  void set_root(ValueLayout root) {
    root_ = std::move(root);
    leaf_ids_ready_ = false;
  }
  const ValueLayout& root() const { return root_; }

  // Points the parameters' leaves at `leaves` (depth-first over all parameters). Allocates
  // nothing after the first call: a loop binds its body once per trip.
  void BindParameters(const std::vector<uint8_t*>& leaves);
  // Runs every thunk; afterwards the root leaves are at RootLeaves().
  void Run(RunContext& context);
  std::vector<uint8_t*> RootLeaves() const;
  // The same into `leaves` (resized; no allocation once it has the capacity).
  void RootLeavesInto(std::vector<uint8_t*>& leaves) const;
  std::vector<const hlo::Shape*> ParameterLeafShapes() const;
  // The buffer ids of the parameters' leaves and of the root's leaves, depth first.
  const std::vector<int64_t>& ParameterLeafIds() const {
    if (!leaf_ids_ready_) ComputeLeafIds();
    return parameter_leaf_ids_;
  }
  const std::vector<int64_t>& RootLeafIds() const {
    if (!leaf_ids_ready_) ComputeLeafIds();
    return root_leaf_ids_;
  }
  // The buffer table as generated code indexes it (compiled_loop.h).
  uint8_t* const* buffer_table() const { return pointers_.data(); }

 private:
  // The buffer ids of the parameters' and the root's leaves, depth first (computed once).
  void ComputeLeafIds() const;

  std::string name_;
  std::vector<uint8_t*> pointers_;
  std::vector<std::unique_ptr<AlignedBytes>> owned_;  // nullptr for bound buffers
  std::set<int64_t> preset_;
  std::vector<std::unique_ptr<Thunk>> thunks_;
  std::vector<ValueLayout> parameters_;
  ValueLayout root_;
  mutable bool leaf_ids_ready_ = false;
  mutable std::vector<int64_t> parameter_leaf_ids_, root_leaf_ids_;
};

// Copies `sources` (leaf pointers of one value) into `destinations`, leaf by leaf, correctly
// even when a source is also a destination of another leaf (e.g. a while body swapping tuple
// elements): such sources are staged first. Allocates only for those.
void CopyLeaves(const std::vector<uint8_t*>& sources, const std::vector<uint8_t*>& destinations,
                const std::vector<int64_t>& bytes);

}  // namespace cpu
