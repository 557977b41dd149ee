// Inference of sensible value ranges for integer parameters, so random inputs exercise a model the
// way real data would: an integer that ends up as a gather / dynamic-slice / dynamic-update-slice /
// scatter start index is drawn within the indexed dimension, and one converted to pred is 0 or 1.
//
// The walk follows each parameter's users through value-preserving ops (convert, reshape,
// bitcast, copy, broadcast, transpose, concatenate, slice, the value operands of select,
// get-tuple-element of tuple parameters) and into called computations of `call` (and back out
// through the call's result), the shape of JAX's jnp.take. Where one value indexes several
// dimensions (a gather's index vector) or is used several times, the tightest bound wins, so every
// drawn value is in range for every use. Values the module does not constrain get no bound.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.h"

namespace io {

// Every leaf of the entry's parameters (parameter order, tuples depth-first) with its tuple
// path inside the parameter: the order random inputs are drawn in, shared by the integer-bound
// and the float-domain inference (value_domains.h).
struct ParameterLeafPath {
  const hlo::Instruction* parameter;
  std::vector<int64_t> path;
};
std::vector<ParameterLeafPath> EntryParameterLeafPaths(const hlo::Module& module);

// One entry per flattened entry-parameter leaf (parameter order, tuples depth-first): the
// exclusive upper bound for values drawn from [0, bound), or nullopt where nothing is inferred.
std::vector<std::optional<int64_t>> InferParameterValueBounds(const hlo::Module& module);

}  // namespace io
