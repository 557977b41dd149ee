// Inputs for running a module: random from a seed, or from .npz/.npy files; and flattening of
// results into `out0`, `out1`, ….
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "tools/io/npz.h"

namespace io {

// Random arguments for the entry computation, deterministic in `seed`:
//   floats: standard normal, except where value_domains.h infers a domain from the uses:
//   positive values (variances before rsqrt, divisors, logs) uniform in [0.5, 1.5), and
//   dot/convolution kernels scaled by 1/sqrt(fan_in) (LeCun);
//   signed integers: in [0, 16) (or [0, 2) for values used as predicates of select after
//   convert); pred: fair coin;
//   integers that feed gather/dynamic-slice/dynamic-update-slice/scatter indices directly (or
//   through convert/reshape/broadcast/concatenate) are drawn in range for the dimension they
//   index, where the module makes that inferable.
std::vector<hlo::Literal> MakeRandomInputs(const hlo::Module& module, uint64_t seed);

// Arguments from an .npz (entries arg0, arg0.0, …) or a single .npy (one parameter).
std::vector<hlo::Literal> LoadInputs(const hlo::Module& module, const std::string& path);

// Arguments from named arrays as an .npz holds them (`path` names the source in errors).
std::vector<hlo::Literal> ArgumentsFromArrays(const hlo::Module& module,
                                              std::vector<NpyArray> arrays,
                                              const std::string& path);

// The seed of a "random:SEED" spec; nullopt for a file path. Throws on a malformed seed.
std::optional<uint64_t> RandomSeed(const std::string& spec);

// Parses the --inputs spec: "random:SEED" or a file path.
std::vector<hlo::Literal> ResolveInputs(const hlo::Module& module, const std::string& spec);

// Names entry arguments as an --inputs file reads them back (arg0, arg0.0, …), so a run on
// random inputs can be reproduced from the file.
std::vector<NpyArray> FlattenInputs(const hlo::Module& module,
                                    const std::vector<hlo::Literal>& arguments);

// Flattens a result (tuple or array) into out0, out1, … (depth-first).
std::vector<NpyArray> FlattenOutputs(const hlo::Literal& result, const std::string& prefix = "out");

}  // namespace io
