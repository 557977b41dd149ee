// sort and topk for the evaluator.
//
// Guarantees:
//  - sort orders every 1-D slice along `dimension` with a stable merge sort driven by the
//    comparator (is_stable=false is allowed any order; the stable one is deterministic). The
//    merge sort never reads out of bounds or loops, whatever the comparator returns, so an
//    inconsistent comparator (e.g. IEEE LT with NaNs) yields some permutation, never a crash.
//  - A comparator that is just compare(param0, param1) with LT/GT (any comparison type) is
//    evaluated inline on operand 0; otherwise the comparator computation is called.
//  - topk returns the k largest (or smallest) elements of each row along the last dimension,
//    in order, with s32 indices; ties keep the lower index first. Floats are ordered by IEEE
//    total order (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), so NaNs count as largest.
#include <algorithm>
#include <bit>

#include "hlo/evaluator_family_util.h"

namespace hlo::eval::rc {
namespace {

// Stable bottom-up merge sort of `order` by `less`; safe for any `less`.
template <typename Less>
void StableMergeSort(std::vector<int64_t>& order, Less&& less) {
  const size_t n = order.size();
  std::vector<int64_t> buffer(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t a = lo, b = mid, out = lo;
      while (a < mid && b < hi) {
        // Take from the right run only when it is strictly less: keeps equal keys in order.
        buffer[out++] = less(order[b], order[a]) ? order[b++] : order[a++];
      }
      while (a < mid) buffer[out++] = order[a++];
      while (b < hi) buffer[out++] = order[b++];
    }
    order.swap(buffer);
  }
}

// Maps a float to an integer whose signed order is IEEE total order.
template <typename F>
auto TotalOrderKey(F value) {
  using I = std::conditional_t<sizeof(F) == 8, int64_t, int32_t>;
  using U = std::make_unsigned_t<I>;
  const I bits = std::bit_cast<I>(value);
  // Negative floats: flip the magnitude bits so larger magnitudes sort lower.
  return bits < 0 ? static_cast<I>(bits ^ static_cast<I>(~U{0} >> 1)) : bits;
}

// a < b on the compute type of Tag, as `compare` with the given comparison type.
template <typename Tag>
bool LessThan(typename Arith<Tag>::Compute a, typename Arith<Tag>::Compute b, ComparisonType type) {
  using C = typename Arith<Tag>::Compute;
  if constexpr (std::is_floating_point_v<C>) {
    if (type == ComparisonType::kTotalOrder) return TotalOrderKey(a) < TotalOrderKey(b);
    return a < b;
  } else if constexpr (std::is_integral_v<C> && !std::is_same_v<Tag, PredTag>) {
    using S = std::make_signed_t<C>;
    using U = std::make_unsigned_t<C>;
    if (type == ComparisonType::kSigned) return static_cast<S>(a) < static_cast<S>(b);
    if (type == ComparisonType::kUnsigned) return static_cast<U>(a) < static_cast<U>(b);
    return a < b;
  } else {
    return a < b;
  }
}

// compare(param0, param1) with LT/GT as the root of a comparator over `type` operands.
std::optional<CompareAttrs> RecognizeSortComparator(const Computation& comparator,
                                                    PrimitiveType type) {
  if (comparator.parameter_count() < 2) return std::nullopt;
  for (const Instruction* p : comparator.parameters()) {
    if (p == nullptr) return std::nullopt;
  }
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || !root->has_attr<CompareAttrs>()) {
    return std::nullopt;
  }
  const Instruction* p0 = comparator.parameter(0);
  const Instruction* p1 = comparator.parameter(1);
  if (p0->shape().type != type || p1->shape().type != type) return std::nullopt;
  CompareAttrs attrs = root->attr<CompareAttrs>();
  if (root->operand(0) == p1 && root->operand(1) == p0) {
    if (attrs.direction == ComparisonDirection::kLt) {
      attrs.direction = ComparisonDirection::kGt;
    } else if (attrs.direction == ComparisonDirection::kGt) {
      attrs.direction = ComparisonDirection::kLt;
    }
  } else if (root->operand(0) != p0 || root->operand(1) != p1) {
    return std::nullopt;
  }
  if (attrs.direction != ComparisonDirection::kLt && attrs.direction != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  return attrs;
}

}  // namespace

Literal EvaluateSort(const Instruction& inst, Operands operands, EvalContext& context) {
  Require(!operands.empty(), inst, "expects at least one operand");
  Require(inst.has_attr<SortAttrs>(), inst, "missing dimensions={...}");
  Require(inst.called_computations().size() == 1, inst, "expects one comparator computation");
  const Shape& shape0 = operands[0]->shape();
  const int64_t n = static_cast<int64_t>(operands.size());
  const int64_t dimension = inst.attr<SortAttrs>().dimension;
  Require(shape0.IsArray() && dimension >= 0 && dimension < std::max<int64_t>(shape0.rank(), 1),
          inst, "sort dimension out of range");
  std::vector<Shape> results = ResultArrayShapes(inst);
  Require(static_cast<int64_t>(results.size()) == n, inst,
          "result must have one array per operand");
  for (int64_t i = 0; i < n; ++i) {
    Require(operands[i]->shape().IsArray() && operands[i]->shape().dims == shape0.dims, inst,
            "operands must share dimensions");
    Require(results[i].IsArray() && results[i].dims == shape0.dims &&
                results[i].type == operands[i]->shape().type,
            inst, "result must match the operands");
  }
  Literal result = NewResult(inst);
  std::vector<Literal*> outs;
  if (result.IsTuple()) {
    for (Literal& e : result.mutable_elements()) outs.push_back(&e);
  } else {
    outs.push_back(&result);
  }
  if (shape0.rank() == 0 || shape0.ElementCount() == 0) {
    for (int64_t i = 0; i < n; ++i) {
      std::copy(operands[i]->bytes().begin(), operands[i]->bytes().end(),
                outs[i]->mutable_bytes().begin());
    }
    return result;
  }
  const Computation& comparator = *inst.called_computations()[0];
  const std::optional<CompareAttrs> fast = RecognizeSortComparator(comparator, shape0.type);
  const int64_t length = shape0.dims[dimension];
  const int64_t stride = RowMajorStrides(shape0.dims)[dimension];
  std::vector<int64_t> outer_dims = shape0.dims;
  outer_dims[dimension] = 1;
  std::vector<int64_t> order(static_cast<size_t>(length));
  const std::vector<int64_t> strides = RowMajorStrides(shape0.dims);
  ForEachIndex(outer_dims, [&](std::span<const int64_t> index) {
    int64_t base = 0;
    for (size_t d = 0; d < index.size(); ++d) base += index[d] * strides[d];
    for (int64_t j = 0; j < length; ++j) order[j] = j;
    if (fast) {
      VisitArrayType(shape0.type, inst, [&](auto tag) {
        using Tag = decltype(tag);
        using A = Arith<Tag>;
        using S = typename A::Storage;
        const S* data = operands[0]->data<S>().data() + base;
        const bool greater = fast->direction == ComparisonDirection::kGt;
        StableMergeSort(order, [&](int64_t a, int64_t b) {
          const auto va = A::Load(data[a * stride]), vb = A::Load(data[b * stride]);
          return greater ? LessThan<Tag>(vb, va, fast->type) : LessThan<Tag>(va, vb, fast->type);
        });
      });
    } else {
      StableMergeSort(order, [&](int64_t a, int64_t b) {
        std::vector<Literal> scalars;
        for (int64_t i = 0; i < n; ++i) {
          scalars.push_back(ScalarAt(*operands[i], base + a * stride));
          scalars.push_back(ScalarAt(*operands[i], base + b * stride));
        }
        std::vector<const Literal*> args;
        for (const Literal& s : scalars) args.push_back(&s);
        bool less = false;
        if (!ReadPredScalar(context.Call(comparator, args), &less)) {
          Fail(inst, "the comparator must return a pred scalar");
        }
        return less;
      });
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t size = ByteSize(operands[i]->shape().type);
      const uint8_t* src = operands[i]->bytes().data();
      uint8_t* dst = outs[i]->mutable_bytes().data();
      for (int64_t j = 0; j < length; ++j) {
        std::copy_n(src + (base + order[j] * stride) * size, size,
                    dst + (base + j * stride) * size);
      }
    }
  });
  return result;
}

Literal EvaluateTopK(const Instruction& inst, Operands operands) {
  Require(operands.size() == 1, inst, "expects one operand");
  Require(inst.has_attr<TopKAttrs>(), inst, "missing k=");
  const Literal& input = *operands[0];
  const Shape& shape = input.shape();
  const int64_t k = inst.attr<TopKAttrs>().k;
  const bool largest = inst.attr<TopKAttrs>().largest;
  Require(shape.IsArray() && shape.rank() >= 1, inst, "operand must be an array of rank >= 1");
  const int64_t length = shape.dims.back();
  Require(k >= 0 && k <= length, inst,
          "k=" + std::to_string(k) + " is outside [0, " + std::to_string(length) + "]");
  std::vector<int64_t> out_dims = shape.dims;
  out_dims.back() = k;
  const Shape& result_shape = inst.shape();
  Require(result_shape.IsTuple() && result_shape.tuple_shapes.size() == 2 &&
              result_shape.tuple_shapes[0].dims == out_dims &&
              result_shape.tuple_shapes[0].type == shape.type &&
              result_shape.tuple_shapes[1].dims == out_dims &&
              result_shape.tuple_shapes[1].type == PrimitiveType::kS32,
          inst, "result must be (values, s32 indices) with the last dimension k");
  Literal result = NewResult(inst);
  Literal& values = result.mutable_elements()[0];
  Literal& indices = result.mutable_elements()[1];
  const int64_t rows = length == 0 ? 0 : input.element_count() / length;
  std::vector<int64_t> order(static_cast<size_t>(length));
  VisitArrayType(shape.type, inst, [&](auto tag) {
    using Tag = decltype(tag);
    using A = Arith<Tag>;
    using S = typename A::Storage;
    for (int64_t r = 0; r < rows; ++r) {
      const S* row = input.data<S>().data() + r * length;
      for (int64_t j = 0; j < length; ++j) order[j] = j;
      // Stable sort: equal values keep ascending index order, i.e. the lower index first.
      StableMergeSort(order, [&](int64_t a, int64_t b) {
        const auto va = A::Load(row[a]), vb = A::Load(row[b]);
        return largest ? LessThan<Tag>(vb, va, ComparisonType::kTotalOrder)
                       : LessThan<Tag>(va, vb, ComparisonType::kTotalOrder);
      });
      S* out_values = values.mutable_data<S>().data() + r * k;
      int32_t* out_indices = indices.mutable_data<int32_t>().data() + r * k;
      for (int64_t j = 0; j < k; ++j) {
        out_values[j] = row[order[j]];
        out_indices[j] = static_cast<int32_t>(order[j]);
      }
    }
  });
  return result;
}

}  // namespace hlo::eval::rc
