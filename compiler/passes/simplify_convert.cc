// Convert chains. convert depends only on the value converted (rounding, truncation,
// saturation and NaN -> 0 are functions of the value), so a convert through an intermediate
// type that holds every value of the source exactly can be skipped.
#include "compiler/passes/simplify_rules.h"

namespace compiler::simplify {
namespace {

using hlo::Instruction;
using O = hlo::Opcode;
using M = Match&;

// convert_B->C(convert_A->B(x)) = convert_A->C(x) when A -> B is lossless; = x when C == A.
Instruction* SkipLosslessIntermediate(M m) {
  const Instruction* inner = m.op(0);
  if (inner->opcode() != O::kConvert) return nullptr;
  Instruction* x = inner->operand(0);
  if (!IsLosslessConvert(x->shape().type, inner->shape().type)) return nullptr;
  if (x->shape().type == m.type()) return x;
  return m.builder().Convert(x, m.type());
}

const Rule kConvertRules[] = {
    // convert_A->A(x) -> x
    {"convert-same-type", O::kConvert, [](M m) { return m.op(0)->shape().type == m.type() ? m.op(0) : nullptr; }},
    // convert_B->C(convert_A->B(x)) -> convert_A->C(x)   (A -> B lossless; x itself when C == A)
    {"convert-convert", O::kConvert, SkipLosslessIntermediate},
};

}  // namespace

std::span<const Rule> ConvertRules() { return kConvertRules; }

}  // namespace compiler::simplify
