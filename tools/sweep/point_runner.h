// Runs the points of a sweep, each as a child process `BINARY sweep-point --index K FLAGS
// --set k=v... -- FILE` (tools/retarget/cmd_sweep_point.cc), at most `jobs` at a time, and turns
// what each child printed into its result fields (sweep_csv.h's kResultColumns order).
//
// Guarantees:
//   * One result per point, in the order of `points`, whatever order the children finish in.
//   * A child that crashes, hangs past the timeout or prints something unexpected never stops the
//     sweep: with `retry_estimated`, its point is run once more with `--estimate-only` (the
//     simulation is the one step the retry leaves out) and the note says what happened; a point
//     that still fails gets `error` = "the point's process failed (...)" plus the last line the
//     child printed on stderr.
//   * One progress line per finished point (and per retry) on `progress`, when set.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/sweep/sweep_csv.h"
#include "tools/sweep/sweep_space.h"

namespace sweep {

struct PointRunOptions {
  std::string binary;                     // the retarget binary
  std::string file;                       // the model
  std::vector<std::string> shared_flags;  // --config, --max-run-seconds, ... (every point)
  int jobs = 1;
  double timeout_seconds = 600;
  bool retry_estimated = true;  // false under --estimate-only: a retry would be the same run
  std::ostream* progress = nullptr;
};

std::vector<std::vector<std::string>> RunPoints(const std::vector<SweepPoint>& points,
                                                const PointRunOptions& options);

// The sweep's table: `point`, one column per axis (values as typed), then each point's result
// fields; rows sorted by point.
SweepTable ResultTable(const SweepSpace& space, const std::vector<SweepPoint>& points,
                       const std::vector<std::vector<std::string>>& results);

// The point's full-key assignments, space-separated (the `config` column).
std::string JoinedAssignments(const SweepPoint& point);

}  // namespace sweep
