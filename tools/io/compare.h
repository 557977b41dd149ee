// Numeric comparison of results: |actual - expected| <= atol + rtol * |expected| per element,
// NaN matches NaN, infinities must match exactly, integers and pred must be equal.
#pragma once

#include <string>
#include <vector>

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

// Compares arrays by name; a missing or extra entry, or a shape mismatch, is a mismatch.
// tolerance == nullptr: the per-type default.
CompareResult CompareArrays(const std::vector<NpyArray>& expected,
                            const std::vector<NpyArray>& actual, const Tolerance* tolerance);

}  // namespace io
