// TopK as a runtime routine (see topk_thunk.h).
#include "targets/cpu/topk_thunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <vector>

namespace cpu {
namespace {

using hlo::PrimitiveType;

// A key whose signed order is the IEEE total order of the f32 value.
int32_t TotalOrderKey(float value) {
  const int32_t bits = std::bit_cast<int32_t>(value);
  return bits < 0 ? bits ^ INT32_MAX : bits;
}

class TopKThunk final : public Thunk {
 public:
  TopKThunk(std::string name, PrimitiveType type, int64_t rows, int64_t n, int64_t k,
            bool largest, int64_t operand, int64_t values, int64_t indices)
      : Thunk(std::move(name)), type_(type), rows_(rows), n_(n), k_(k), largest_(largest),
        operand_(operand),
        values_(values), indices_(indices), keys_(static_cast<size_t>(n)),
        order_(static_cast<size_t>(n)) {}
  const char* kind() const override { return "topk"; }

  void Run(ThunkSequence& sequence, RunContext&) override {
    const uint8_t* in = sequence.buffer(operand_);
    uint8_t* values = sequence.buffer(values_);
    auto* indices = reinterpret_cast<int32_t*>(sequence.buffer(indices_));
    const int64_t element = hlo::ByteSize(type_);
    for (int64_t row = 0; row < rows_; ++row) {
      const uint8_t* row_in = in + row * n_ * element;
      for (int64_t i = 0; i < n_; ++i) {
        float value;
        if (type_ == PrimitiveType::kF32) {
          std::memcpy(&value, row_in + i * 4, 4);
        } else {
          uint16_t bits;
          std::memcpy(&bits, row_in + i * 2, 2);
          value = hlo::BF16ToFloat(bits);
        }
        keys_[static_cast<size_t>(i)] = TotalOrderKey(value);
      }
      std::iota(order_.begin(), order_.end(), 0);
      std::partial_sort(order_.begin(), order_.begin() + k_, order_.end(),
                        [this](int32_t a, int32_t b) {
                          const int32_t ka = keys_[static_cast<size_t>(a)];
                          const int32_t kb = keys_[static_cast<size_t>(b)];
                          if (ka == kb) return a < b;
                          return largest_ ? ka > kb : ka < kb;
                        });
      for (int64_t j = 0; j < k_; ++j) {
        const int32_t source = order_[static_cast<size_t>(j)];
        std::memcpy(values + (row * k_ + j) * element, row_in + source * element,
                    static_cast<size_t>(element));
        indices[row * k_ + j] = source;
      }
    }
  }

 private:
  PrimitiveType type_;
  int64_t rows_, n_, k_;
  bool largest_;
  int64_t operand_, values_, indices_;
  std::vector<int32_t> keys_;   // scratch, one row
  std::vector<int32_t> order_;
};

}  // namespace

std::unique_ptr<Thunk> MakeTopKThunk(const hlo::Instruction& call, int64_t operand,
                                     int64_t values, int64_t indices) {
  const bool largest = call.opcode() == hlo::Opcode::kTopK ? call.attr<hlo::TopKAttrs>().largest
                                                          : true;
  if (call.operand_count() != 1) return nullptr;
  const hlo::Shape& in = call.operand(0)->shape();
  const hlo::Shape& out = call.shape();
  if (!in.IsArray() || in.rank() < 1 || !in.HasDefaultLayout()) return nullptr;
  if (in.type != PrimitiveType::kF32 && in.type != PrimitiveType::kBF16) return nullptr;
  if (!out.IsTuple() || out.tuple_shapes.size() != 2) return nullptr;
  const hlo::Shape& v = out.tuple_shapes[0];
  const hlo::Shape& i = out.tuple_shapes[1];
  if (v.type != in.type || i.type != PrimitiveType::kS32 || v.rank() != in.rank() ||
      i.dims != v.dims || !v.HasDefaultLayout() || !i.HasDefaultLayout())
    return nullptr;
  if (!std::equal(in.dims.begin(), in.dims.end() - 1, v.dims.begin())) return nullptr;
  const int64_t n = in.dims.back();
  const int64_t k = v.dims.back();
  if (k < 0 || k > n || n > INT32_MAX) return nullptr;
  const int64_t rows = n == 0 ? 0 : in.ElementCount() / n;
  return std::make_unique<TopKThunk>(call.name(), in.type, rows, n, k, largest, operand, values,
                                     indices);
}

}  // namespace cpu
