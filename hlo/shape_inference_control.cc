// Shape inference for the ops that call computations (call, fusion, while, conditional,
// custom-call), random numbers (rng, rng-bit-generator) and collectives.
//
//   call / fusion:  the callee's parameters match the operands; the result is the callee's root.
//   while:          condition is (T) -> pred[], body is (T) -> T; the result is T.
//   conditional:    operand 0 is the branch index (pred[] with exactly 2 branches, or s32[]);
//                   branch i takes operand i+1; all branches return the same shape.
//   custom-call:    the declared shape (its meaning belongs to the target).
//   collectives:    all-reduce / all-to-all / collective-permute keep the operand shapes;
//                   all-gather multiplies and reduce-scatter divides `dimension` by the group
//                   size, which is known when replica_groups are listed; otherwise the declared
//                   size along that dimension is accepted.
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {
namespace {

std::vector<Shape> OperandShapes(const Instruction& inst) {
  std::vector<Shape> shapes;
  shapes.reserve(static_cast<size_t>(inst.operand_count()));
  for (int64_t i = 0; i < inst.operand_count(); ++i) shapes.push_back(OperandShape(inst, i));
  return shapes;
}

Shape InferCall(const Instruction& inst, std::string_view role) {
  const Computation& callee = Callee(inst, 0, role, 1);
  ExpectParameters(inst, callee, role, OperandShapes(inst));
  return RootShape(inst, callee);
}

// async-start: ((operands), the wrapped computation's result, context...). XLA's context words
// are s32 or u32 scalars (or none); they carry no value this model needs.
bool IsContextWord(const Shape& shape) {
  return shape.IsArray() && shape.rank() == 0 &&
         (shape.type == PrimitiveType::kS32 || shape.type == PrimitiveType::kU32);
}

Shape InferAsyncStart(const Instruction& inst) {
  const Shape result = InferCall(inst, "calls");
  const Shape& declared = inst.shape();
  bool context_words = declared.IsTuple();
  for (size_t k = 2; context_words && k < declared.tuple_shapes.size(); ++k)
    context_words = IsContextWord(declared.tuple_shapes[k]);
  if (!context_words || declared.tuple_shapes.size() < 2 ||
      !declared.tuple_shapes[0].Compatible(Shape::Tuple(OperandShapes(inst))) ||
      !declared.tuple_shapes[1].Compatible(result)) {
    Fail(inst, "has shape " + declared.ToString(false) + " but ((operands), " +
                   result.ToString(false) + ", context...) was expected (context: s32[] or "
                   "u32[] words)");
  }
  return declared;
}

// async-update passes the start's value on; async-done returns its result, element 1.
Shape InferAsyncUpdateOrDone(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 1);
  const Shape& started = OperandShape(inst, 0);
  if (!started.IsTuple() || started.tuple_shapes.size() < 2) {
    Fail(inst, "takes " + started.ToString(false) + " but the value of an async-start was "
               "expected");
  }
  return inst.opcode() == Opcode::kAsyncUpdate ? started : started.tuple_shapes[1];
}

Shape InferWhile(const Instruction& inst) {
  const Shape& state = OperandShape(inst, 0);
  const Shape params[] = {state};
  ExpectSignature(inst, Callee(inst, 0, "condition", 2), "condition", params,
                  Shape::Scalar(PrimitiveType::kPred));
  ExpectSignature(inst, Callee(inst, 1, "body", 2), "body", params, state);
  return state;
}

Shape InferConditional(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 1);
  const Shape& index = ExpectArrayOperand(inst, 0);
  const int64_t branches = static_cast<int64_t>(inst.called_computations().size());
  const bool is_pred = index.type == PrimitiveType::kPred;
  if (index.rank() != 0 || (!is_pred && index.type != PrimitiveType::kS32)) {
    Fail(inst, "branch index has shape " + index.ToString(false) +
                   " but pred[] or s32[] was expected");
  }
  if (branches < 1 || (is_pred && branches != 2)) {
    Fail(inst, "has " + std::to_string(branches) + " branch computations but " +
                   (is_pred ? "a pred index needs exactly 2" : "at least 1 is needed"));
  }
  if (inst.operand_count() != branches + 1) {
    Fail(inst, "expects " + std::to_string(branches + 1) +
                   " operands (the index and one per branch), got " +
                   std::to_string(inst.operand_count()));
  }
  const Shape& result = RootShape(inst, Callee(inst, 0, "branch 0", -1));
  for (int64_t b = 0; b < branches; ++b) {
    const std::string role = "branch " + std::to_string(b);
    const Shape params[] = {OperandShape(inst, b + 1)};
    ExpectSignature(inst, Callee(inst, static_cast<size_t>(b), role, -1), role, params, result);
  }
  return result;
}

Shape InferRng(const Instruction& inst) {
  const Shape& declared = DeclaredArray(inst);
  ExpectOperandCount(inst, 2);
  for (int64_t i = 0; i < 2; ++i) {
    const Shape& bound = ExpectArrayOperand(inst, i);
    if (bound.rank() != 0 || bound.type != declared.type) {
      Fail(inst, "operand " + std::to_string(i) + " has shape " + bound.ToString(false) +
                     " but " + Shape::Scalar(declared.type).ToString(false) + " was expected");
    }
  }
  return Shape::Array(declared.type, declared.dims);
}

Shape InferRngBitGenerator(const Instruction& inst) {
  const Shape& state = ExpectArrayOperand(inst, 0);
  const Shape& declared = inst.shape();
  if (!declared.IsTuple() || declared.tuple_shapes.size() != 2 ||
      !declared.tuple_shapes[0].Compatible(state) || !declared.tuple_shapes[1].IsArray()) {
    Fail(inst, "result " + declared.ToString(false) + " must be (" + state.ToString(false) +
                   ", <array>)");
  }
  return declared;
}

// The group size all-gather / reduce-scatter work with, or 0 when not inferable: with no listed
// groups (all devices), or in cross-replica-and-partition mode (a channel_id without
// use_global_device_ids), where each listed replica stands for all partitions.
int64_t GroupSize(const Instruction& inst) {
  const auto& attrs = AttrsOf<CollectiveAttrs>(inst, "collective");
  const auto& groups = attrs.replica_groups;
  if (groups.empty()) return 0;
  if (attrs.channel_id != 0 && !attrs.use_global_device_ids) return 0;
  for (const auto& group : groups) {
    if (group.size() != groups[0].size()) Fail(inst, "replica groups differ in size");
  }
  return static_cast<int64_t>(groups[0].size());
}

// all-gather (gather=true) / reduce-scatter: operand i resized along `dimension`. `declared`
// is the result as written (the second element of all-gather-start's tuple).
Shape InferResizingCollective(const Instruction& inst, bool gather, const Shape& declared) {
  ExpectOperandCountAtLeast(inst, 1);
  const int64_t dimension = AttrsOf<CollectiveAttrs>(inst, "collective").dimension;
  const int64_t group = GroupSize(inst);
  const int64_t n = inst.operand_count();
  if (n > 1 && (!declared.IsTuple() || static_cast<int64_t>(declared.tuple_shapes.size()) != n)) {
    Fail(inst, "result " + declared.ToString(false) + " must be a tuple of " +
                   std::to_string(n) + " arrays");
  }
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& operand = ExpectArrayOperand(inst, i);
    ExpectDimension(inst, dimension, operand.rank(), "dimension");
    std::vector<int64_t> dims = operand.dims;
    int64_t& size = dims[static_cast<size_t>(dimension)];
    if (group > 0) {
      if (!gather && size % group != 0) {
        Fail(inst, "dimension " + std::to_string(dimension) + " of size " +
                       std::to_string(size) + " does not divide into " + std::to_string(group) +
                       " groups");
      }
      if (gather && __builtin_mul_overflow(size, group, &size)) {
        Fail(inst, "gathered dimension " + std::to_string(dimension) + " is too large");
      }
      if (!gather) size /= group;
    } else {
      // Group size unknown: the declared size along `dimension` is the only witness.
      const Shape& element = n > 1 ? declared.tuple_shapes[static_cast<size_t>(i)] : declared;
      if (element.IsArray() && element.rank() == operand.rank()) {
        size = element.dims[static_cast<size_t>(dimension)];
      }
    }
    results.push_back(Shape::Array(operand.type, std::move(dims)));
  }
  return TupleOrSingle(std::move(results));
}

// all-reduce / reduce-scatter: to_apply is (T, T) -> T for the element type T of operand 0.
void CheckCollectiveReducer(const Instruction& inst) {
  const Shape* first = &OperandShape(inst, 0);
  while (first->IsTuple() && !first->tuple_shapes.empty()) first = &first->tuple_shapes[0];
  if (!first->IsArray()) return;
  const Shape scalar = Shape::Scalar(first->type);
  const Shape params[] = {scalar, scalar};
  ExpectSignature(inst, Callee(inst, 0, "to_apply", 1), "to_apply", params, scalar);
}

}  // namespace

Shape InferControlShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kCall: return InferCall(inst, "to_apply");
    case Opcode::kFusion: return InferCall(inst, "fused");
    case Opcode::kWhile: return InferWhile(inst);
    case Opcode::kAsyncStart: return InferAsyncStart(inst);
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone: return InferAsyncUpdateOrDone(inst);
    case Opcode::kConditional: return InferConditional(inst);
    case Opcode::kCustomCall: return inst.shape();  // owned by the target; unchecked
    case Opcode::kRng: return InferRng(inst);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(inst);
    default: break;
  }
  Fail(inst, "is not a control op (internal error)");
}

Shape InferCollectiveShape(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 1);
  switch (inst.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      CheckCollectiveReducer(inst);
      return TupleOrSingle(OperandShapes(inst));
    case Opcode::kAllToAll:
      return TupleOrSingle(OperandShapes(inst));
    case Opcode::kCollectivePermute:
      // The in-place form carries extra buffer operands; only the plain form is inferable.
      return inst.operand_count() == 1 ? OperandShape(inst, 0) : inst.shape();
    case Opcode::kCollectivePermuteStart: {
      // (operand, result, u32[], u32[]): the two context words are XLA's and carry nothing.
      const Shape& declared = inst.shape();
      const Shape& operand = OperandShape(inst, 0);
      bool ok = declared.IsTuple() && declared.tuple_shapes.size() >= 2 &&
                declared.tuple_shapes.size() <= 4;
      for (size_t k = 0; ok && k < declared.tuple_shapes.size(); ++k) {
        const Shape& element = declared.tuple_shapes[k];
        ok = k < 2 ? inst.operand_count() != 1 || element.Compatible(operand)
                   : element.IsArray() && element.rank() == 0 && IsInteger(element.type);
      }
      if (!ok) {
        Fail(inst, "result " + declared.ToString(false) + " must be (" +
                       operand.ToString(false) + ", " + operand.ToString(false) +
                       ", u32[], u32[])");
      }
      return declared;
    }
    case Opcode::kAllGather:
      return InferResizingCollective(inst, /*gather=*/true, inst.shape());
    case Opcode::kAllGatherStart: {
      const Shape& declared = inst.shape();
      if (!declared.IsTuple() || declared.tuple_shapes.size() != 2) {
        Fail(inst, "result " + declared.ToString(false) + " must be (operands, results)");
      }
      return Shape::Tuple({TupleOrSingle(OperandShapes(inst)),
                           InferResizingCollective(inst, true, declared.tuple_shapes[1])});
    }
    case Opcode::kReduceScatter:
      CheckCollectiveReducer(inst);
      return InferResizingCollective(inst, /*gather=*/false, inst.shape());
    case Opcode::kAllReduceDone:
      return OperandShape(inst, 0);
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone: {
      const Shape& started = OperandShape(inst, 0);
      if (!started.IsTuple() || started.tuple_shapes.size() < 2) {
        Fail(inst, "operand " + started.ToString(false) + " is not the value of a -start");
      }
      return started.tuple_shapes[1];
    }
    default: break;
  }
  Fail(inst, "is not a collective op (internal error)");
}

}  // namespace hlo::shape_inference
