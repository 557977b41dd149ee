// PlanSort (sort_plan.h).
#include "targets/systolic/lowering/sort_plan.h"

#include "targets/systolic/lowering/scatter_plan.h"

namespace systolic::lowering {

using hlo::Opcode;
using hlo::PrimitiveType;

std::optional<SortPlan> PlanSort(const hlo::Instruction& inst, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<SortPlan> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const bool top_k = inst.opcode() == Opcode::kTopK;
  if (!top_k && inst.opcode() != Opcode::kSort) return fail("not a sort");
  if (inst.operand_count() < 1 || inst.operand_count() > (top_k ? 1 : 2)) {
    return fail("a sort of more than a key and a payload array");
  }
  const hlo::Shape& keys = inst.operand(0)->shape();
  if (!keys.IsArray() || keys.rank() == 0) return fail("a sort of a scalar");
  for (const hlo::Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray() || !operand->shape().HasDefaultLayout()) {
      return fail("a sort with a non-default layout");
    }
  }
  const PrimitiveType key = keys.type;
  if (key != PrimitiveType::kS8 && key != PrimitiveType::kU8 && key != PrimitiveType::kS32 &&
      key != PrimitiveType::kBF16 && key != PrimitiveType::kF16 && key != PrimitiveType::kF32) {
    return fail("sort keys of type " + std::string(hlo::PrimitiveTypeName(key)));
  }
  SortPlan plan;
  plan.top_k = top_k;
  plan.key_type = key;
  plan.length = keys.dims.back();
  plan.rows = keys.ElementCount() / std::max<int64_t>(plan.length, 1);
  if (top_k) {
    const auto& attrs = inst.attr<hlo::TopKAttrs>();
    plan.kept = attrs.k;
    plan.descending = attrs.largest;
  } else {
    if (inst.attr<hlo::SortAttrs>().dimension != keys.rank() - 1) {
      return fail("a sort along other than the last dimension");
    }
    plan.kept = plan.length;
    if (inst.operand_count() == 2) {
      const PrimitiveType payload = inst.operand(1)->shape().type;
      if (payload != PrimitiveType::kS32 && payload != PrimitiveType::kU32 &&
          payload != PrimitiveType::kF32) {
        return fail("a sort payload of type " + std::string(hlo::PrimitiveTypeName(payload)));
      }
      plan.payload = true;
    }
    const hlo::Instruction* root = inst.called_computations().at(0)->root();
    if (root->opcode() != Opcode::kCompare || !IsParameter(root->operand(0), 0) ||
        !IsParameter(root->operand(1), 1)) {
      return fail("a sort whose comparator is not a compare of the keys");
    }
    const auto& compare = root->attr<hlo::CompareAttrs>();
    if (compare.type != hlo::ComparisonType::kDefault &&
        compare.type != hlo::ComparisonType::kFloat &&
        compare.type != hlo::ComparisonType::kTotalOrder &&
        !(hlo::IsInteger(key) && (compare.type == hlo::ComparisonType::kSigned ||
                                  compare.type == hlo::ComparisonType::kUnsigned))) {
      return fail("a sort comparator of another comparison type");
    }
    if (compare.direction == hlo::ComparisonDirection::kLt) {
      plan.descending = false;
    } else if (compare.direction == hlo::ComparisonDirection::kGt) {
      plan.descending = true;
    } else {
      return fail("a sort comparator other than less-than or greater-than");
    }
  }
  if (plan.length <= 0 || plan.rows <= 0 || plan.kept > plan.length) {
    return fail("an empty sort");
  }
  plan.padded = 1;
  while (plan.padded < plan.length) plan.padded *= 2;
  if (plan.padded > (int64_t{1} << 19)) return fail("sort rows longer than 2^19 keys");
  return plan;
}

}  // namespace systolic::lowering
