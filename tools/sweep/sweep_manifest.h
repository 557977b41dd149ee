// `retarget sweep --manifest DIR`: the same sweep as a job list for a cluster scheduler, so a
// sweep that outgrows one machine runs on an existing engine instead of our process pool.
//
//   DIR/sweep.sbatch   a Slurm job-array script: `--array=0-(N-1)`, each task evaluates the point
//                      SLURM_ARRAY_TASK_ID with `retarget sweep ... --point K` into
//                      DIR/parts/point-K.csv (log in DIR/logs/point-K.log)
//   DIR/commands.txt   one shell command per point for GNU parallel (`parallel -j 8 < FILE`),
//                      each writing the same DIR/parts/point-K.csv
// Then `retarget sweep-merge DIR/parts/*.csv --csv OUT` joins the parts (sweep_csv.h).
//
// Guarantees: every path and argument in a command is single-quoted for the shell (a quote
// inside becomes '\''), so a model path with spaces or quotes runs as given (the `#SBATCH
// --output` directive is not shell-parsed: DIR must be free of spaces there); paths are
// absolute, so the tasks may start in any directory; the binary can be replaced with the
// RETARGET environment variable in the Slurm script (clusters often install it elsewhere).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sweep {

struct ManifestSpec {
  std::string retarget;                 // absolute path of the retarget binary
  std::string model;                    // absolute path of the model
  std::vector<std::string> point_args;  // flags every task repeats (--config, --set, ...)
  int64_t points = 0;
  std::string dir;  // absolute manifest directory (parts/ and logs/ inside)
};

std::string ShellQuote(std::string_view text);

// The partial CSV of point `index` (also the name sweep-merge's glob picks up).
std::string PartPath(const ManifestSpec& spec, int64_t index);

std::string SlurmScript(const ManifestSpec& spec);
std::string ParallelCommands(const ManifestSpec& spec);

}  // namespace sweep
