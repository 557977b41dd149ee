// Runs command lines as child processes, at most `jobs` at a time: the process-level parallelism
// of `retarget sweep` (one child per point, so a point that crashes, hangs or runs out of memory
// cannot take the sweep down).
//
// Guarantees:
//   * Every command gets an Outcome, in the order given, whatever the child did: its exit status
//     or the signal that ended it, and its stdout and stderr (each read back from a private
//     temporary file, at most kMaxChildOutputBytes; the files are removed).
//   * A child running longer than `timeout_seconds` is killed (SIGKILL) and marked timed_out;
//     so is one found finished only after its limit (the parent polls every 10 ms, so a
//     loaded machine cannot turn a timeout into a success).
//   * `on_finished` is called in the parent, from the calling thread, as each child ends (for
//     progress lines); children are started in order.
//   * No shell is involved: arguments go to execv as they are.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sweep {

inline constexpr int64_t kMaxChildOutputBytes = int64_t{4} << 20;

struct Outcome {
  int exit_code = -1;  // set when the child exited
  int signal = 0;      // set when a signal ended it
  bool timed_out = false;
  bool spawn_failed = false;  // the command could not be started (stderr says why)
  std::string out, err;

  bool Succeeded() const { return exit_code == 0 && !timed_out && !spawn_failed; }
  // "exit status 1", "killed by signal 11 (Segmentation fault)", "timed out after 5 s", ...
  std::string Describe(double timeout_seconds) const;
};

// argv[0] is the program's path.
std::vector<Outcome> RunChildren(
    const std::vector<std::vector<std::string>>& commands, int jobs, double timeout_seconds,
    const std::function<void(size_t index, const Outcome&)>& on_finished);

}  // namespace sweep
