// Internal interface between the shape-inference dispatcher (shape_inference.cc) and the op-family
// files (shape_inference_*.cc). Not part of hlo/'s public API.
//
// Every helper here throws hlo::Error located at the instruction, with a message that starts with
// the instruction's name ("add.3: operand 1 has shape ..."), so callers never need to add context.
// The helpers never index past an operand list, an attribute vector or a called-computation list
// without checking first: InferShape runs on unverified instructions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"

namespace hlo::shape_inference {

// Throws hlo::Error at the instruction's location: "<name>: <message>".
[[noreturn]] void Fail(const Instruction& inst, const std::string& message);

// "{0,1,2}" for messages.
std::string DimsToString(std::span<const int64_t> dims);

// Operand count checks ("add.3: expects 2 operands, got 3").
void ExpectOperandCount(const Instruction& inst, int64_t count);
void ExpectOperandCountAtLeast(const Instruction& inst, int64_t count);

// The shape of operand i; ExpectArrayOperand also requires an array (not a tuple or token).
const Shape& OperandShape(const Instruction& inst, int64_t i);
const Shape& ExpectArrayOperand(const Instruction& inst, int64_t i);
// Requires operand i to be a scalar of an integral type (a dynamic index).
void ExpectScalarIndexOperand(const Instruction& inst, int64_t i);

// The declared shape when it must be an array (ops whose dims cannot be inferred).
const Shape& DeclaredArray(const Instruction& inst);

// The op's typed attributes. An instruction that carries no attributes at all (NoAttrs) gets the
// default-constructed struct, so that e.g. a dot without dimension numbers is an outer product;
// an instruction that carries a different attribute family is an error.
template <typename T>
const T& AttrsOf(const Instruction& inst, std::string_view family_name) {
  if (const T* attrs = std::get_if<T>(&inst.attrs())) return *attrs;
  if (std::holds_alternative<NoAttrs>(inst.attrs())) {
    static const T kDefault{};
    return kDefault;
  }
  Fail(inst, "carries attributes of the wrong kind (expected " + std::string(family_name) + ")");
}

// Called computation number i (role names it in messages: "to_apply", "body", ...). Requires the
// list to have exactly `expected_count` entries (or at least 1 when expected_count < 0) and a root.
const Computation& Callee(const Instruction& inst, size_t i, std::string_view role,
                          int64_t expected_count);
const Shape& RootShape(const Instruction& inst, const Computation& callee);

// Checks that `callee` takes exactly `params` (compatible shapes, layouts ignored) and that its
// root is compatible with `result`. `role` names the computation in messages.
void ExpectSignature(const Instruction& inst, const Computation& callee, std::string_view role,
                     std::span<const Shape> params, const Shape& result);
// As above for the parameters only.
void ExpectParameters(const Instruction& inst, const Computation& callee, std::string_view role,
                      std::span<const Shape> params);

// A dimension number in [0, rank); `what` names it in messages.
void ExpectDimension(const Instruction& inst, int64_t dim, int64_t rank, std::string_view what);
// Every entry is a dimension in [0, rank) and no entry repeats.
void ExpectDistinctDimensions(const Instruction& inst, std::span<const int64_t> dims, int64_t rank,
                              std::string_view what);

// Element types that XLA treats as interchangeable for mixed-precision ops (equal, or both
// floating point).
bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b);

// Shape of a tuple (or the single element when there is exactly one), as variadic ops return.
Shape TupleOrSingle(std::vector<Shape> shapes);

// Output size of one windowed dimension (reduce-window, select-and-scatter, convolution), or an
// error when the window parameters are invalid (size/stride/dilation < 1, negative result).
int64_t WindowedOutputSize(const Instruction& inst, int64_t input_size, const WindowDim& window,
                           int64_t dim_index);

// Op families (one file each). Each returns the result shape (default layout).
Shape InferElementwiseShape(const Instruction& inst);     // shape_inference_elementwise.cc
Shape InferDataMovementShape(const Instruction& inst);    // shape_inference_data_movement.cc
Shape InferGatherShape(const Instruction& inst);          // shape_inference_gather.cc
Shape InferScatterShape(const Instruction& inst);         // shape_inference_gather.cc
Shape InferReductionShape(const Instruction& inst);       // shape_inference_reduction.cc
Shape InferContractionShape(const Instruction& inst);     // shape_inference_contraction.cc
Shape InferControlShape(const Instruction& inst);         // shape_inference_control.cc
Shape InferCollectiveShape(const Instruction& inst);      // shape_inference_control.cc
Shape InferLeafShape(const Instruction& inst);            // shape_inference.cc
Shape InferFftShape(const Instruction& inst);             // shape_inference_fft.cc

}  // namespace hlo::shape_inference
