// Memory sizes of values (see value_sizes.h).
#include "compiler/memory/value_sizes.h"

#include <limits>

#include "hlo/custom_call_targets.h"

namespace compiler::memory {
namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max()
                                                      : a + b;
}

}  // namespace

bool IsAliasing(const hlo::Instruction& instruction) {
  switch (instruction.opcode()) {
    case hlo::Opcode::kTuple:
    case hlo::Opcode::kGetTupleElement:
    case hlo::Opcode::kBitcast:
    case hlo::Opcode::kOptimizationBarrier:
      return true;
    case hlo::Opcode::kCustomCall:
      return instruction.operand_count() == 1 &&
             instruction.shape() == instruction.operand(0)->shape() &&
             hlo::IsAnnotationCustomCall(instruction.attr<hlo::CustomCallAttrs>().target);
    default:
      return false;
  }
}

int64_t ArrayBytes(const hlo::Shape& shape) {
  if (!shape.IsArray()) return 0;
  const int64_t elements = shape.ElementCount();
  const int64_t element_bytes = hlo::ByteSize(shape.type);
  if (elements < 0) return std::numeric_limits<int64_t>::max();
  if (element_bytes != 0 && elements > std::numeric_limits<int64_t>::max() / element_bytes) {
    return std::numeric_limits<int64_t>::max();
  }
  return elements * element_bytes;
}

int64_t ShapeBytes(const hlo::Shape& shape) {
  if (!shape.IsTuple()) return ArrayBytes(shape);
  int64_t total = 0;
  for (const hlo::Shape& element : shape.tuple_shapes) {
    total = SaturatingAdd(total, ShapeBytes(element));
  }
  return total;
}

int64_t DefinedTempBytes(const hlo::Instruction& instruction) {
  const hlo::Opcode op = instruction.opcode();
  if (IsAliasing(instruction) || op == hlo::Opcode::kParameter || op == hlo::Opcode::kConstant)
    return 0;
  return ShapeBytes(instruction.shape());
}

}  // namespace compiler::memory
