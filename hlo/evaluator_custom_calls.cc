// Builtin custom-call targets (registered explicitly by RegisterBuiltinCustomCalls).
//
// "TopK" is XLA's custom-call form of top-k: operand [batch..., n] -> (values [batch..., k],
// s32 indices [batch..., k]) with k taken from the result shape. Elements are ordered largest
// first in the IEEE total order (+NaN above +inf, -0 below +0); equal elements keep the lower
// index first, so the result is deterministic.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "hlo/evaluator_family.h"
#include "hlo/evaluator_internal.h"
#include "hlo/evaluator_types.h"

namespace hlo::eval {
namespace {

// Sort keys whose signed order is the element order (total order for floats).
std::vector<int64_t> OrderKeys(const Literal& operand) {
  std::vector<int64_t> keys(static_cast<size_t>(operand.element_count()));
  DispatchArrayType(operand.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    using T = ElementTraits<P>;
    auto data = operand.data<typename T::Storage>();
    for (size_t i = 0; i < keys.size(); ++i) {
      auto value = T::Load(data[i]);
      if constexpr (kIsFloatType<P>) {
        const int64_t bits = std::bit_cast<int64_t>(static_cast<double>(value));
        keys[i] = bits < 0 ? bits ^ INT64_MAX : bits;
      } else if constexpr (std::is_unsigned_v<decltype(value)>) {
        keys[i] = static_cast<int64_t>(static_cast<uint64_t>(value) ^ (uint64_t{1} << 63));
      } else {
        keys[i] = static_cast<int64_t>(value);
      }
    }
  });
  return keys;
}

}  // namespace

Literal EvaluateTopKCustomCall(const Instruction& call, std::span<const Literal* const> operands) {
  const Shape& shape = call.shape();
  if (operands.size() != 1 || !operands[0]->shape().IsArray() || operands[0]->shape().rank() < 1 ||
      !shape.IsTuple() || shape.tuple_shapes.size() != 2) {
    throw Error("TopK takes one array operand [batch..., n] and returns (values, indices)");
  }
  const Literal& operand = *operands[0];
  const Shape& values_shape = shape.tuple_shapes[0];
  const Shape& indices_shape = shape.tuple_shapes[1];
  const auto& in_dims = operand.shape().dims;
  const int64_t n = in_dims.back();
  const int64_t k = values_shape.rank() == 0 ? -1 : values_shape.dims.back();
  if (values_shape.type != operand.shape().type || values_shape.rank() != operand.shape().rank() ||
      !std::equal(in_dims.begin(), in_dims.end() - 1, values_shape.dims.begin()) || k < 0 ||
      k > n || !IsInteger(indices_shape.type) || indices_shape.dims != values_shape.dims) {
    throw Error("TopK result " + shape.ToString(false) + " does not match operand " +
                operand.shape().ToString(false));
  }
  Literal values(values_shape);
  Literal indices(indices_shape);
  const std::vector<int64_t> keys = OrderKeys(operand);
  const int64_t rows = n == 0 ? 0 : operand.element_count() / n;
  const int64_t element_size = ByteSize(values_shape.type);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t* row_keys = keys.data() + row * n;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      return row_keys[a] != row_keys[b] ? row_keys[a] > row_keys[b] : a < b;
    });
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(values.mutable_bytes().data() + (row * k + j) * element_size,
                  operand.bytes().data() + (row * n + order[j]) * element_size,
                  static_cast<size_t>(element_size));
      indices.SetFromInt64(row * k + j, order[j]);
    }
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(values));
  elements.push_back(std::move(indices));
  return Literal::Tuple(std::move(elements));
}

Literal EvaluateAnnotationCustomCall(const Instruction& call,
                                    std::span<const Literal* const> operands) {
  if (operands.size() != 1 || !operands[0]->shape().Compatible(call.shape())) {
    throw Error("custom-call '" + call.attr<CustomCallAttrs>().target +
                "' annotates one operand and returns it unchanged: expected one operand of " +
                call.shape().ToString(false));
  }
  return *operands[0];
}

Literal EvaluateAllocateBufferCustomCall(const Instruction& call,
                                         std::span<const Literal* const> operands) {
  if (!operands.empty()) throw Error("AllocateBuffer takes no operands");
  return MakeResult(call);  // XLA leaves the buffer uninitialized; zeros here, deterministically
}

Literal EvaluateOneDnnLayerNormCustomCall(const Instruction& call,
                                          std::span<const Literal* const> operands) {
  const Shape& shape = call.shape();
  if (operands.empty() || operands.size() > 3 || !shape.IsArray() || shape.rank() < 1 ||
      !operands[0]->shape().Compatible(shape)) {
    throw Error("__onednn$layernorm takes (input[..., n], scale[n], shift[n]) and returns the "
                "input's shape " + shape.ToString(false));
  }
  const int64_t n = shape.dims.back();
  for (size_t k = 1; k < operands.size(); ++k) {
    if (operands[k]->element_count() != n) {
      throw Error("__onednn$layernorm operand " + std::to_string(k) + " has shape " +
                  operands[k]->shape().ToString(false) + ", expected " + std::to_string(n) +
                  " elements (the normalized dimension)");
    }
  }
  // backend_config {"onednn_layer_norm_config":{"rescale":...,"epsilon_typecast":BITS}}: the
  // epsilon travels as the bits of an f32; absent, the field reads 0 in XLA too.
  float epsilon = 0;
  const std::string& config = call.attr<CustomCallAttrs>().backend_config;
  if (size_t at = config.find("epsilon_typecast"); at != std::string::npos) {
    at = config.find(':', at);
    const int64_t bits =
        at == std::string::npos ? 0 : std::strtoll(config.c_str() + at + 1, nullptr, 10);
    epsilon = std::bit_cast<float>(static_cast<uint32_t>(bits));
  }
  const Literal& x = *operands[0];
  Literal out = MakeResult(call);
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < n; ++i) mean += x.GetAsDouble(r * n + i);
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      const double d = x.GetAsDouble(r * n + i) - mean;
      variance += d * d;
    }
    variance /= static_cast<double>(n);
    const double inverse_deviation = 1 / std::sqrt(variance + static_cast<double>(epsilon));
    for (int64_t i = 0; i < n; ++i) {
      double y = (x.GetAsDouble(r * n + i) - mean) * inverse_deviation;
      if (operands.size() > 1) y *= operands[1]->GetAsDouble(i);
      if (operands.size() > 2) y += operands[2]->GetAsDouble(i);
      out.SetFromDouble(r * n + i, y);
    }
  }
  return out;
}

Literal EvaluateGetRngSeedCustomCall(const Instruction& call,
                                     std::span<const Literal* const> operands) {
  if (!operands.empty() || !call.shape().IsArray() || call.shape().rank() != 0 ||
      !IsInteger(call.shape().type)) {
    throw Error("GetRngSeed takes no operands and returns an integer scalar");
  }
  Literal seed = MakeResult(call);
  seed.SetFromInt64(0, kRngSeed);
  return seed;
}

}  // namespace hlo::eval
