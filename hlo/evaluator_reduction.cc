// The reduction family of the evaluator: dispatch for reduce, reduce-window, scatter,
// select-and-scatter, sort, topk and map, plus reduce and map themselves.
//
// Guarantees (ir.h):
//  - reduce combines the reduced elements of each output position sequentially in row-major
//    order of the reduced dimensions, starting from the init value, so results are
//    deterministic and independent of the fast path taken; bf16/f16 accumulators are rounded
//    after every combination (the reduction accumulates in its own type).
//  - When to_apply is a single add/multiply/maximum/minimum/and/or of its two parameters it is
//    applied inline on typed storage instead of calling the computation per element.
//  - Bad input (mismatched shapes, out-of-range dimensions) throws hlo::Error naming the
//    instruction; nothing is read or written out of bounds.
#include <algorithm>
#include <utility>

#include "hlo/evaluator_family_util.h"

namespace hlo::eval::rc {

// Defined in the sibling family files (declared here, not in the shared header, because only
// this dispatcher calls them).
Literal EvaluateReduceWindow(const Instruction& inst, Operands operands, EvalContext& context);
Literal EvaluateSelectAndScatter(const Instruction& inst, Operands operands, EvalContext& context);
Literal EvaluateScatter(const Instruction& inst, Operands operands, EvalContext& context);
Literal EvaluateSort(const Instruction& inst, Operands operands, EvalContext& context);
Literal EvaluateTopK(const Instruction& inst, Operands operands);

namespace {

bool IsParameter(const Instruction* inst, int64_t number) {
  return inst->opcode() == Opcode::kParameter && inst->has_attr<ParameterAttrs>() &&
         inst->attr<ParameterAttrs>().number == number;
}

}  // namespace

std::optional<CompareAttrs> RecognizeCompareBody(const Computation& computation,
                                                 PrimitiveType type) {
  const Instruction* root = BinaryRootOverParameters(computation, type);
  if (root == nullptr || root->opcode() != Opcode::kCompare ||
      root->shape().type != PrimitiveType::kPred || !root->has_attr<CompareAttrs>()) {
    return std::nullopt;
  }
  CompareAttrs attrs = root->attr<CompareAttrs>();
  if (IsParameter(root->operand(0), 1)) {
    // compare(p1, p0) with direction D is compare(p0, p1) with the mirrored direction.
    switch (attrs.direction) {
      case ComparisonDirection::kLt:
        attrs.direction = ComparisonDirection::kGt;
        break;
      case ComparisonDirection::kGt:
        attrs.direction = ComparisonDirection::kLt;
        break;
      case ComparisonDirection::kLe:
        attrs.direction = ComparisonDirection::kGe;
        break;
      case ComparisonDirection::kGe:
        attrs.direction = ComparisonDirection::kLe;
        break;
      case ComparisonDirection::kEq:
      case ComparisonDirection::kNe:
        break;
    }
  }
  return attrs;
}

std::vector<Literal> SplitResult(Literal result, int64_t n, const Instruction& inst) {
  std::vector<Literal> parts;
  if (n == 1 && !result.IsTuple()) {
    parts.push_back(std::move(result));
    return parts;
  }
  if (!result.IsTuple() || static_cast<int64_t>(result.elements().size()) != n) {
    Fail(inst, "called computation returned " + result.shape().ToString(false) + ", expected a " +
                   std::to_string(n) + "-tuple of scalars");
  }
  for (Literal& element : result.mutable_elements()) parts.push_back(std::move(element));
  return parts;
}

std::vector<Shape> ResultArrayShapes(const Instruction& inst) {
  if (inst.shape().IsTuple()) return inst.shape().tuple_shapes;
  return {inst.shape()};
}

namespace {

struct ReduceGeometry {
  std::vector<int64_t> input_dims;
  std::vector<bool> reduced;         // per input dimension
  std::vector<int64_t> output_dims;  // kept dimensions in order
};

ReduceGeometry CheckReduce(const Instruction& inst, Operands operands, int64_t n) {
  Require(inst.has_attr<DimensionsAttrs>(), inst, "missing dimensions={...}");
  Require(inst.called_computations().size() == 1, inst, "expects one to_apply computation");
  ReduceGeometry g;
  g.input_dims = operands[0]->shape().dims;
  const int64_t rank = static_cast<int64_t>(g.input_dims.size());
  g.reduced.assign(static_cast<size_t>(rank), false);
  for (int64_t d : inst.attr<DimensionsAttrs>().dimensions) {
    Require(d >= 0 && d < rank, inst, "reduced dimension " + std::to_string(d) + " out of range");
    Require(!g.reduced[d], inst, "dimension " + std::to_string(d) + " reduced twice");
    g.reduced[d] = true;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!g.reduced[d]) g.output_dims.push_back(g.input_dims[d]);
  }
  std::vector<Shape> results = ResultArrayShapes(inst);
  Require(static_cast<int64_t>(results.size()) == n, inst, "result must have one array per input");
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = operands[i]->shape();
    const Shape& init = operands[n + i]->shape();
    Require(input.IsArray() && input.dims == g.input_dims, inst,
            "all inputs must have the dimensions of input 0");
    Require(init.IsArray() && init.rank() == 0, inst, "init values must be scalars");
    Require(
        results[i].IsArray() && results[i].dims == g.output_dims && results[i].type == init.type,
        inst, "result " + results[i].ToString(false) + " does not match the reduction");
  }
  return g;
}

// Single-input reduce with a recognized body: walks the input once in row-major order,
// combining into per-output accumulators. For a fixed output position the reduced elements
// arrive in row-major order of the reduced dimensions, i.e. the documented sequential order.
template <typename Tag, BinaryKind kKind>
void FastReduce(const Literal& input, const Literal& init, const ReduceGeometry& g, Literal& out) {
  using A = Arith<Tag>;
  using C = typename A::Compute;
  using S = typename A::Storage;
  constexpr bool kRoundEachStep = !std::is_same_v<S, C>;
  const S* src = input.data<S>().data();
  std::vector<C> acc(static_cast<size_t>(out.element_count()), A::Load(init.data<S>()[0]));
  const int64_t rank = static_cast<int64_t>(g.input_dims.size());
  // Output stride of each input dimension (0 for reduced ones).
  std::vector<int64_t> out_stride(static_cast<size_t>(rank), 0);
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    if (!g.reduced[d]) {
      out_stride[d] = s;
      s *= g.input_dims[d];
    }
  }
  if (input.element_count() > 0) {
    const int64_t inner = rank == 0 ? 1 : g.input_dims[rank - 1];
    const int64_t inner_stride = rank == 0 ? 0 : out_stride[rank - 1];
    const int64_t outer_rank = std::max<int64_t>(rank - 1, 0);
    std::vector<int64_t> index(static_cast<size_t>(outer_rank), 0);
    int64_t in_offset = 0, out_offset = 0;
    while (true) {
      C* a = acc.data() + out_offset;
      const S* x = src + in_offset;
      for (int64_t j = 0; j < inner; ++j) {
        C v = CombineAs<Tag>(kKind, a[j * inner_stride], A::Load(x[j]));
        if constexpr (kRoundEachStep) v = A::Load(A::Store(v));
        a[j * inner_stride] = v;
      }
      in_offset += inner;
      int64_t k = outer_rank - 1;
      for (; k >= 0; --k) {
        out_offset += out_stride[k];
        if (++index[k] < g.input_dims[k]) break;
        out_offset -= out_stride[k] * g.input_dims[k];
        index[k] = 0;
      }
      if (k < 0) break;
    }
  }
  S* dst = out.mutable_data<S>().data();
  for (size_t i = 0; i < acc.size(); ++i) dst[i] = A::Store(acc[i]);
}

template <typename Tag>
void FastReduceDispatch(BinaryKind kind, const Literal& input, const Literal& init,
                        const ReduceGeometry& g, Literal& out) {
  switch (kind) {
    case BinaryKind::kAdd:
      return FastReduce<Tag, BinaryKind::kAdd>(input, init, g, out);
    case BinaryKind::kMultiply:
      return FastReduce<Tag, BinaryKind::kMultiply>(input, init, g, out);
    case BinaryKind::kMaximum:
      return FastReduce<Tag, BinaryKind::kMaximum>(input, init, g, out);
    case BinaryKind::kMinimum:
      return FastReduce<Tag, BinaryKind::kMinimum>(input, init, g, out);
    case BinaryKind::kAnd:
      return FastReduce<Tag, BinaryKind::kAnd>(input, init, g, out);
    case BinaryKind::kOr:
      return FastReduce<Tag, BinaryKind::kOr>(input, init, g, out);
  }
}

// General reduce: calls to_apply(acc_0..acc_{n-1}, x_0..x_{n-1}) per reduced element.
void CallingReduce(const Instruction& inst, Operands operands, int64_t n, const ReduceGeometry& g,
                   std::vector<Literal*> outs, EvalContext& context) {
  const Computation& body = *inst.called_computations()[0];
  const int64_t rank = static_cast<int64_t>(g.input_dims.size());
  std::vector<int64_t> reduced_dims, input_strides = RowMajorStrides(g.input_dims);
  std::vector<int64_t> reduced_strides, kept_strides;
  for (int64_t d = 0; d < rank; ++d) {
    (g.reduced[d] ? reduced_strides : kept_strides).push_back(input_strides[d]);
    if (g.reduced[d]) reduced_dims.push_back(g.input_dims[d]);
  }
  int64_t out_linear = 0;
  ForEachIndex(g.output_dims, [&](std::span<const int64_t> out_index) {
    int64_t base = 0;
    for (size_t k = 0; k < out_index.size(); ++k) base += out_index[k] * kept_strides[k];
    std::vector<Literal> acc;
    for (int64_t i = 0; i < n; ++i) acc.push_back(*operands[n + i]);
    ForEachIndex(reduced_dims, [&](std::span<const int64_t> red_index) {
      int64_t linear = base;
      for (size_t k = 0; k < red_index.size(); ++k) linear += red_index[k] * reduced_strides[k];
      std::vector<Literal> elems;
      std::vector<const Literal*> args;
      for (int64_t i = 0; i < n; ++i) elems.push_back(ScalarAt(*operands[i], linear));
      for (int64_t i = 0; i < n; ++i) args.push_back(&acc[i]);
      for (int64_t i = 0; i < n; ++i) args.push_back(&elems[i]);
      acc = SplitResult(context.Call(body, args), n, inst);
    });
    for (int64_t i = 0; i < n; ++i) StoreScalar(*outs[i], out_linear, acc[i], inst);
    ++out_linear;
  });
}

Literal EvaluateReduce(const Instruction& inst, Operands operands, EvalContext& context) {
  Require(!operands.empty() && operands.size() % 2 == 0, inst,
          "expects N inputs followed by N init values");
  const int64_t n = static_cast<int64_t>(operands.size()) / 2;
  for (const Literal* op : operands)
    Require(op->shape().IsArray(), inst, "operands must be arrays");
  const ReduceGeometry g = CheckReduce(inst, operands, n);
  Literal result = NewResult(inst);
  std::vector<Literal*> outs;
  if (result.IsTuple()) {
    for (Literal& e : result.mutable_elements()) outs.push_back(&e);
  } else {
    outs.push_back(&result);
  }
  const PrimitiveType type = operands[0]->shape().type;
  std::optional<BinaryKind> kind;
  if (n == 1 && operands[1]->shape().type == type) {
    kind = RecognizeBinaryBody(*inst.called_computations()[0], type);
  }
  if (kind) {
    VisitArrayType(type, inst, [&](auto tag) {
      FastReduceDispatch<decltype(tag)>(*kind, *operands[0], *operands[1], g, *outs[0]);
    });
  } else {
    CallingReduce(inst, operands, n, g, outs, context);
  }
  return result;
}

// map: result[i] = to_apply(op_0[i], ..., op_{n-1}[i]) over arrays of one shape.
Literal EvaluateMap(const Instruction& inst, Operands operands, EvalContext& context) {
  Require(inst.called_computations().size() == 1, inst, "expects one to_apply computation");
  Require(inst.shape().IsArray(), inst, "result must be an array");
  for (const Literal* op : operands) {
    Require(op->shape().IsArray() && op->shape().dims == inst.shape().dims, inst,
            "operands must have the result's dimensions");
  }
  const Computation& body = *inst.called_computations()[0];
  const PrimitiveType type = inst.shape().type;
  std::optional<BinaryKind> kind;
  if (operands.size() == 2 && operands[0]->shape().type == type &&
      operands[1]->shape().type == type) {
    kind = RecognizeBinaryBody(body, type);
  }
  if (kind) {
    Literal result = *operands[0];  // shares the bytes until CombineInto writes them
    result.mutable_shape() = inst.shape();
    CombineInto(*kind, inst, result, *operands[1]);
    return result;
  }
  Literal result = NewResult(inst);
  const int64_t count = result.element_count();
  for (int64_t i = 0; i < count; ++i) {
    std::vector<Literal> elems;
    std::vector<const Literal*> args;
    for (const Literal* op : operands) elems.push_back(ScalarAt(*op, i));
    for (const Literal& e : elems) args.push_back(&e);
    StoreScalar(result, i, context.Call(body, args), inst);
  }
  return result;
}

}  // namespace
}  // namespace hlo::eval::rc

namespace hlo::eval {

Literal EvaluateReduction(const Instruction& inst, Operands operands, EvalContext& context) {
  switch (inst.opcode()) {
    case Opcode::kReduce:
      return rc::EvaluateReduce(inst, operands, context);
    case Opcode::kReduceWindow:
      return rc::EvaluateReduceWindow(inst, operands, context);
    case Opcode::kScatter:
      return rc::EvaluateScatter(inst, operands, context);
    case Opcode::kSelectAndScatter:
      return rc::EvaluateSelectAndScatter(inst, operands, context);
    case Opcode::kSort:
      return rc::EvaluateSort(inst, operands, context);
    case Opcode::kTopK:
      return rc::EvaluateTopK(inst, operands);
    case Opcode::kMap:
      return rc::EvaluateMap(inst, operands, context);
    default:
      break;
  }
  rc::Fail(inst, "is not an op of the reduction family");
}

}  // namespace hlo::eval
