// Numeric comparison of results: |actual - expected| <= atol + rtol * |expected| per element,
// NaN matches NaN, infinities must match exactly, integers and pred must be equal.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "tools/io/npz.h"

namespace io {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};
// Default tolerance for an element type (looser for bf16/f16).
Tolerance DefaultTolerance(hlo::PrimitiveType type);

struct CompareResult {
  bool matched = true;
  std::string summary;  // "MATCHED (3 arrays, 1024 elements)" or "MISMATCH out0[2,7]: expected …"
  // Worst element (largest error relative to its allowance) of the first mismatching array.
  std::string worst_array;
  std::vector<int64_t> worst_index;
  double worst_expected = 0, worst_actual = 0;
};

// The most terms any one value of `module` sums: a dot's contracting size, a reduce's reduced
// size, a convolution's window volume times its input features (per group), a reduce-window's
// window volume; 1 when nothing sums. Every computation counts (a loop body's dot included).
int64_t LongestReduction(const hlo::Module& module);

// The factor by which `run --compare` widens the per-type defaults for a module that sums
// `length` terms: sqrt(length), at least 1 — how the rounding error of a sum computed in another
// order grows (random-walk accumulation), the scaling XLA's own tests give their error specs.
// A K=1024 f32 dot gets rtol 3.2e-4, still far below a dropped term or bf16 rounding.
double ReductionToleranceScale(int64_t length);

// For each flattened output of `module` (out0, out1, … as FlattenOutputs names them) that is
// computed through floating values narrower than its own type, the narrowest of them: an f32
// result of matmul operands rounded to bf16 is only as close to another backend's as bf16
// allows (a different order of f32 sums flips bf16 roundings). Values count where an operation
// produces them (a convert to bf16 included), not where they are only moved, nor parameters and
// constants (both sides read the same ones). Every instruction of a called computation counts.
std::map<std::string, hlo::PrimitiveType> OutputsComputedThroughNarrowerFloats(
    const hlo::Module& module);

// Compares arrays by name; a missing or extra entry, or a shape mismatch, is a mismatch.
// tolerance == nullptr: the per-type default, both of its terms multiplied by `default_scale`
// (an explicit tolerance is used as given); with `computed_through`, an array named there gets
// the looser of its own type's default and that type's.
CompareResult CompareArrays(const std::vector<NpyArray>& expected,
                            const std::vector<NpyArray>& actual, const Tolerance* tolerance,
                            double default_scale = 1.0,
                            const std::map<std::string, hlo::PrimitiveType>* computed_through =
                                nullptr);

}  // namespace io
