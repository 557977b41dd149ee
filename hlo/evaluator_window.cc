// Windowed reductions of the evaluator: reduce-window (variadic, padding, strides, base and
// window dilation) and select-and-scatter.
//
// Guarantees:
//  - A window position that falls into padding or into a hole of the base dilation contributes
//    nothing (as XLA's evaluator): each output starts from the init value and combines the
//    in-bounds elements of its window in row-major window order.
//  - select-and-scatter picks, per source element, the first in-bounds window element and
//    replaces it by a later one whenever select(current, candidate) is false; the source value
//    is then combined into that position with `scatter`, source elements in row-major order.
//  - The output shape is checked against the window arithmetic; bad input throws hlo::Error.
#include "hlo/evaluator_family_util.h"

namespace hlo::eval::rc {
namespace {

// Per-dimension window arithmetic shared by both ops.
struct WindowGeometry {
  std::vector<int64_t> input_dims, output_dims, input_strides;
  std::vector<WindowDim> window;

  // Linear input offsets (per dimension, already multiplied by the stride) of the in-bounds
  // window elements of output coordinate `o` along `d`, in window order.
  void ValidOffsets(int64_t d, int64_t o, std::vector<int64_t>& offsets) const {
    offsets.clear();
    const WindowDim& w = window[d];
    ForEachWindowTap(w, o * w.stride - w.pad_lo, input_dims[d],
                     [&](int64_t, int64_t i) { offsets.push_back(i * input_strides[d]); });
  }
};

WindowGeometry MakeGeometry(const Instruction& inst, const Shape& input, const Shape& output) {
  Require(inst.has_attr<WindowAttrs>(), inst, "missing window={...}");
  WindowGeometry g;
  g.input_dims = input.dims;
  g.output_dims = output.dims;
  g.input_strides = RowMajorStrides(input.dims);
  g.window = inst.attr<WindowAttrs>().window.dims;
  if (g.window.empty() && input.rank() == 0) return g;
  Require(static_cast<int64_t>(g.window.size()) == input.rank(), inst,
          "window rank must equal the operand rank");
  Require(output.rank() == input.rank(), inst, "output rank must equal the operand rank");
  for (size_t d = 0; d < g.window.size(); ++d) {
    Require(g.window[d].size >= 1, inst, "window sizes must be positive");
    const int64_t expected = WindowOutputSize(g.window[d], input.dims[d], inst);
    Require(output.dims[d] == expected, inst,
            "dimension " + std::to_string(d) + " of the output should be " +
                std::to_string(expected) + ", got " + std::to_string(output.dims[d]));
  }
  return g;
}

// Calls fn(input_linear_index) for each in-bounds element of the window of output `out_index`,
// in row-major window order.
template <typename Fn>
void ForEachWindowElement(const WindowGeometry& g, std::span<const int64_t> out_index,
                          std::vector<std::vector<int64_t>>& scratch, Fn&& fn) {
  const size_t rank = g.input_dims.size();
  scratch.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    g.ValidOffsets(static_cast<int64_t>(d), out_index[d], scratch[d]);
    if (scratch[d].empty()) return;
  }
  std::vector<size_t> pos(rank, 0);
  while (true) {
    int64_t linear = 0;
    for (size_t d = 0; d < rank; ++d) linear += scratch[d][pos[d]];
    fn(linear);
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++pos[d] < scratch[d].size()) break;
      pos[d] = 0;
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

}  // namespace

Literal EvaluateReduceWindow(const Instruction& inst, Operands operands, EvalContext& context) {
  Require(!operands.empty() && operands.size() % 2 == 0, inst,
          "expects N inputs followed by N init values");
  Require(inst.called_computations().size() == 1, inst, "expects one to_apply computation");
  const int64_t n = static_cast<int64_t>(operands.size()) / 2;
  std::vector<Shape> results = ResultArrayShapes(inst);
  Require(static_cast<int64_t>(results.size()) == n, inst, "result must have one array per input");
  for (int64_t i = 0; i < n; ++i) {
    Require(
        operands[i]->shape().IsArray() && operands[i]->shape().dims == operands[0]->shape().dims,
        inst, "all inputs must have the dimensions of input 0");
    Require(operands[n + i]->shape().IsArray() && operands[n + i]->shape().rank() == 0, inst,
            "init values must be scalars");
    Require(results[i].IsArray() && results[i].dims == results[0].dims &&
                results[i].type == operands[n + i]->shape().type,
            inst, "result " + std::to_string(i) + " does not match its init value");
  }
  const WindowGeometry g = MakeGeometry(inst, operands[0]->shape(), results[0]);
  Literal result = NewResult(inst);
  std::vector<Literal*> outs;
  if (result.IsTuple()) {
    for (Literal& e : result.mutable_elements()) outs.push_back(&e);
  } else {
    outs.push_back(&result);
  }
  const Computation& body = *inst.called_computations()[0];
  const PrimitiveType type = operands[0]->shape().type;
  std::optional<BinaryKind> kind;
  if (n == 1 && operands[1]->shape().type == type) kind = RecognizeBinaryBody(body, type);
  std::vector<std::vector<int64_t>> scratch;
  int64_t out_linear = 0;
  if (kind) {
    VisitArrayType(type, inst, [&](auto tag) {
      using Tag = decltype(tag);
      using A = Arith<Tag>;
      using S = typename A::Storage;
      const S* src = operands[0]->data<S>().data();
      const S init = operands[1]->data<S>()[0];
      S* dst = outs[0]->mutable_data<S>().data();
      ForEachIndex(g.output_dims, [&](std::span<const int64_t> out_index) {
        S acc = init;  // stored (rounded) after every combination, as the op's own type
        ForEachWindowElement(g, out_index, scratch, [&](int64_t i) {
          acc = A::Store(CombineAs<Tag>(*kind, A::Load(acc), A::Load(src[i])));
        });
        dst[out_linear++] = acc;
      });
    });
    return result;
  }
  ForEachIndex(g.output_dims, [&](std::span<const int64_t> out_index) {
    std::vector<Literal> acc;
    for (int64_t i = 0; i < n; ++i) acc.push_back(*operands[n + i]);
    ForEachWindowElement(g, out_index, scratch, [&](int64_t linear) {
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
  return result;
}

namespace {

// compare(a, b) for a recognized select body, on the compute type C.
template <typename C>
bool CompareValues(ComparisonDirection direction, C a, C b) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kLt:
      return a < b;
  }
  return false;
}

}  // namespace

Literal EvaluateSelectAndScatter(const Instruction& inst, Operands operands, EvalContext& context) {
  Require(operands.size() == 3, inst, "expects operand, source and init_value");
  Require(inst.called_computations().size() == 2, inst, "expects select and scatter computations");
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  Require(operand.shape().IsArray() && source.shape().IsArray(), inst, "operands must be arrays");
  Require(init.shape().IsArray() && init.shape().rank() == 0, inst, "init_value must be a scalar");
  Require(inst.shape().IsArray() && inst.shape().dims == operand.shape().dims &&
              inst.shape().type == init.shape().type && source.shape().type == init.shape().type,
          inst, "result must have the operand's dimensions and the source's type");
  for (const WindowDim& w : inst.has_attr<WindowAttrs>() ? inst.attr<WindowAttrs>().window.dims
                                                         : std::vector<WindowDim>{}) {
    Require(w.base_dilation == 1 && w.window_dilation == 1, inst, "dilation is not allowed");
  }
  const WindowGeometry g = MakeGeometry(inst, operand.shape(), source.shape());
  Literal result = NewResult(inst);
  const int64_t count = result.element_count();
  for (int64_t i = 0; i < count; ++i) StoreScalar(result, i, init, inst);

  const Computation& select = *inst.called_computations()[0];
  const Computation& scatter = *inst.called_computations()[1];
  const PrimitiveType type = operand.shape().type;
  std::optional<CompareAttrs> cmp = RecognizeCompareBody(select, type);
  const bool fast_select =
      cmp && (cmp->type == ComparisonType::kDefault || cmp->type == ComparisonType::kFloat ||
              (cmp->type == ComparisonType::kSigned && IsSignedInteger(type)) ||
              (cmp->type == ComparisonType::kUnsigned && IsUnsignedInteger(type)));
  std::optional<BinaryKind> combine;
  if (type == result.shape().type) combine = RecognizeBinaryBody(scatter, type);

  std::vector<std::vector<int64_t>> scratch;
  int64_t source_linear = 0;
  ForEachIndex(g.output_dims, [&](std::span<const int64_t> source_index) {
    int64_t selected = -1;
    ForEachWindowElement(g, source_index, scratch, [&](int64_t candidate) {
      if (selected < 0) {
        selected = candidate;
        return;
      }
      bool keep = false;
      if (fast_select) {
        keep = VisitArrayType(type, inst, [&](auto tag) {
          using A = Arith<decltype(tag)>;
          using S = typename A::Storage;
          auto data = operand.data<S>();
          return CompareValues(cmp->direction, A::Load(data[selected]), A::Load(data[candidate]));
        });
      } else {
        Literal a = ScalarAt(operand, selected), b = ScalarAt(operand, candidate);
        const Literal* args[] = {&a, &b};
        if (!ReadPredScalar(context.Call(select, args), &keep)) {
          Fail(inst, "select must return a pred scalar");
        }
      }
      if (!keep) selected = candidate;
    });
    if (selected >= 0) {
      if (combine) {
        VisitArrayType(type, inst, [&](auto tag) {
          using Tag = decltype(tag);
          using A = Arith<Tag>;
          using S = typename A::Storage;
          S* out = result.mutable_data<S>().data();
          out[selected] = A::Store(CombineAs<Tag>(*combine, A::Load(out[selected]),
                                                  A::Load(source.data<S>()[source_linear])));
        });
      } else {
        Literal current = ScalarAt(result, selected), src = ScalarAt(source, source_linear);
        const Literal* args[] = {&current, &src};
        StoreScalar(result, selected, context.Call(scatter, args), inst);
      }
    }
    ++source_linear;
  });
  return result;
}

}  // namespace hlo::eval::rc
