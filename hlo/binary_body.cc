// Reducer recognition (binary_body.h).
#include "hlo/binary_body.h"

namespace hlo {
namespace {

bool IsParameter(const Instruction* inst, int64_t number) {
  return inst->opcode() == Opcode::kParameter && inst->has_attr<ParameterAttrs>() &&
         inst->attr<ParameterAttrs>().number == number;
}

}  // namespace

const Instruction* BinaryRootOverParameters(const Computation& computation, PrimitiveType type) {
  if (computation.parameter_count() != 2) return nullptr;
  for (const Instruction* p : computation.parameters()) {
    if (p == nullptr || !p->shape().IsArray() || p->shape().rank() != 0 ||
        p->shape().type != type) {
      return nullptr;
    }
  }
  const Instruction* root = computation.root();
  if (root == nullptr || root->operand_count() != 2 || !root->shape().IsArray() ||
      root->shape().rank() != 0) {
    return nullptr;
  }
  const bool in_order = IsParameter(root->operand(0), 0) && IsParameter(root->operand(1), 1);
  const bool swapped = IsParameter(root->operand(0), 1) && IsParameter(root->operand(1), 0);
  return (in_order || swapped) ? root : nullptr;
}

std::optional<BinaryKind> RecognizeBinaryBody(const Computation& computation, PrimitiveType type) {
  const Instruction* root = BinaryRootOverParameters(computation, type);
  if (root == nullptr || root->shape().type != type) return std::nullopt;
  if (IsComplex(type)) return std::nullopt;  // the typed fast paths are for real types
  const bool bitwise_ok = IsInteger(type) || type == PrimitiveType::kPred;
  switch (root->opcode()) {
    case Opcode::kAdd:
      return BinaryKind::kAdd;
    case Opcode::kMultiply:
      return BinaryKind::kMultiply;
    case Opcode::kMaximum:
      return BinaryKind::kMaximum;
    case Opcode::kMinimum:
      return BinaryKind::kMinimum;
    case Opcode::kAnd:
      return bitwise_ok ? std::optional(BinaryKind::kAnd) : std::nullopt;
    case Opcode::kOr:
      return bitwise_ok ? std::optional(BinaryKind::kOr) : std::nullopt;
    default:
      return std::nullopt;  // any other body: call the computation per element
  }
}

}  // namespace hlo
