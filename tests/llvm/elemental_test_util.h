// Shared pieces of the emitter tests: edge-value inputs per element type, and the comparison of
// the JIT-compiled emitter output with the reference interpreter.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace llvm_test {

// Values every op of `type` should be tried on: zeros of both signs, ±1, halves (rounding ties),
// NaN, ±inf, extremes, denormals for floats; 0, ±1, INT_MIN, INT_MAX, shift amounts around the
// width for integers.
std::vector<double> EdgeValues(hlo::PrimitiveType type);

// `count` elements: first every pair (edge[i], edge[j]) taken along `pair_axis` (0 gives
// edge[i], 1 gives edge[j], so two operands made with axes 0 and 1 meet in every combination),
// then pseudo-random values (seeded). `max_magnitude` > 0 folds larger finite floats into range.
hlo::Literal MakeInput(const hlo::Shape& shape, int pair_axis, uint64_t seed,
                       double max_magnitude = 0.0);

// Runs the module's entry with the interpreter and with the JIT-compiled emitter on `arguments`
// and checks every element of every output: integers and pred bit for bit, floats within
// `max_ulp` (NaN matches any NaN). Returns "" or a description of the first mismatches.
std::string CompareWithInterpreter(const hlo::Module& module,
                                   std::span<const hlo::Literal> arguments, int64_t max_ulp = 0);

// Element `i` of `literal` as text (bit pattern included for floats).
std::string ElementText(const hlo::Literal& literal, int64_t i);

}  // namespace llvm_test
