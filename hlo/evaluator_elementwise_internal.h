// Shared pieces of the elementwise family files (internal to hlo/): typed map loops and the
// per-type-class entry points the dispatcher in evaluator_elementwise.cc calls.
//
// The loops read and write the typed storage of literals directly (no per-element virtual call
// or double round trip); each op is instantiated once per element type.
#pragma once

#include <cstdint>
#include <string>

#include "hlo/evaluator_internal.h"
#include "hlo/evaluator_types.h"

namespace hlo::eval {

// out[i] = fn(in[i]) in compute types; InP/OutP select storage and rounding.
template <PrimitiveType InP, PrimitiveType OutP, typename Fn>
void MapUnary(const Literal& in, Literal& out, Fn fn) {
  using In = ElementTraits<InP>;
  using Out = ElementTraits<OutP>;
  auto src = in.data<typename In::Storage>();
  auto dst = out.mutable_data<typename Out::Storage>();
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = Out::Store(fn(In::Load(src[i])));
}

// out[i] = fn(a[i], b[i]); both operands have InP and the result's element count.
template <PrimitiveType InP, PrimitiveType OutP, typename Fn>
void MapBinary(const Literal& a, const Literal& b, Literal& out, Fn fn) {
  using In = ElementTraits<InP>;
  using Out = ElementTraits<OutP>;
  auto lhs = a.data<typename In::Storage>();
  auto rhs = b.data<typename In::Storage>();
  auto dst = out.mutable_data<typename Out::Storage>();
  for (size_t i = 0; i < dst.size(); ++i) {
    dst[i] = Out::Store(fn(In::Load(lhs[i]), In::Load(rhs[i])));
  }
}

[[noreturn]] inline void ThrowUnsupported(Opcode op, PrimitiveType type) {
  throw Error("'" + std::string(OpcodeName(op)) + "' is not defined for element type " +
              std::string(PrimitiveTypeName(type)));
}

// evaluator_elementwise_float.cc: unary and binary arithmetic on f16/bf16/f32/f64.
void FloatUnary(Opcode op, const Literal& in, Literal& out);
void FloatBinary(Opcode op, const Literal& a, const Literal& b, Literal& out);

// evaluator_elementwise_int.cc: unary and binary ops on integers and pred.
void IntegerUnary(Opcode op, const Literal& in, Literal& out);
void IntegerBinary(Opcode op, const Literal& a, const Literal& b, Literal& out);

// evaluator_complex.cc: ops with a complex operand or result, and real/imag/complex (which
// also take real values). IsComplexElementwise says whether `op` on these goes there.
bool IsComplexElementwise(Opcode op, Operands operands, const Shape& result);
void ComplexElementwise(Opcode op, Operands operands, Literal& out);

// evaluator_compare.cc: compare (IEEE or total order for floats; signed/unsigned integers).
void CompareElements(const CompareAttrs& attrs, const Literal& a, const Literal& b, Literal& out);

// evaluator_convert.cc: convert, bitcast-convert, reduce-precision.
void ConvertElements(const Literal& in, Literal& out);
void BitcastConvertElements(const Literal& in, Literal& out);
void ReducePrecisionElements(const ReducePrecisionAttrs& attrs, const Literal& in, Literal& out);

}  // namespace hlo::eval
