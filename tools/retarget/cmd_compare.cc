// `retarget compare EXPECTED.npz ACTUAL.npz [--rtol R] [--atol A]`: compares two result files
// entry by entry and prints MATCHED or MISMATCH with the worst element; exit 1 on mismatch.
#include <iostream>

#include "tools/io/compare.h"
#include "tools/retarget/cli.h"

namespace cli {

CommandSpec CompareSpec() {
  CommandSpec spec;
  spec.name = "compare";
  spec.arguments = "EXPECTED.npz ACTUAL.npz";
  spec.summary = "compare two result files (.npz): MATCHED or MISMATCH";
  spec.details =
      "Arrays are matched by name; a missing or extra entry, or a different dtype or shape, is a\n"
      "mismatch. Floats match when |actual - expected| <= atol + rtol * |expected| (NaN matches\n"
      "NaN, infinities must be equal); integers and bools must be equal. Default tolerances\n"
      "depend on the dtype (float32 rtol 1e-5 atol 1e-6, float16 1e-3/1e-3, float64 1e-9/1e-12);\n"
      "--rtol/--atol replace them for every array (an omitted one keeps the float32 default).\n"
      "Exit status 0 when MATCHED, 1 on MISMATCH or a bad file.\n"
      "\nexample:\n  retarget compare out/reference.npz out/candidate.npz --rtol 1e-3\n";
  spec.min_positional = 2;
  spec.max_positional = 2;
  spec.flags = {
      {"--rtol", "R", "relative tolerance", ""},
      {"--atol", "A", "absolute tolerance", ""},
  };
  return spec;
}

int RunCompare(const ParsedArgs& args, const Context&) {
  std::optional<io::Tolerance> tolerance;
  if (args.Has("--rtol") || args.Has("--atol")) {
    tolerance = io::Tolerance{};
    if (auto rtol = args.Get("--rtol")) tolerance->rtol = ParseNonNegativeDouble("--rtol", *rtol);
    if (auto atol = args.Get("--atol")) tolerance->atol = ParseNonNegativeDouble("--atol", *atol);
  }
  std::vector<io::NpyArray> expected = io::ReadNpz(args.positional[0]);
  std::vector<io::NpyArray> actual = io::ReadNpz(args.positional[1]);
  io::CompareResult result = io::CompareArrays(expected, actual, tolerance ? &*tolerance : nullptr);
  std::cout << result.summary << std::endl;
  return result.matched ? kExitOk : kExitFailure;
}

}  // namespace cli
