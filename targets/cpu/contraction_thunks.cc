// Dot / convolution thunks over gemm.h (see contraction_thunks.h).
#include "targets/cpu/contraction_thunks.h"

#include <bit>
#include <cstdint>
#include <cstring>

#include "compiler/passes/dot_canonicalizer.h"
#include "targets/cpu/gemm.h"

namespace cpu {
namespace {

using hlo::PrimitiveType;

// bf16 <-> f32 inline so the widening / rounding loops vectorize (the out-of-line literal.h
// calls were a fifth of mha_block's time). Bit-identical to hlo::BF16ToFloat / FloatToBF16:
// round to nearest even; a NaN stays a quiet NaN with its sign.
inline float WidenBF16(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
inline uint16_t RoundToBF16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

bool IsGemmType(PrimitiveType type) {
  return type == PrimitiveType::kF32 || type == PrimitiveType::kBF16 ||
         type == PrimitiveType::kF16;
}

// An operand or result as f32: its own memory when it is f32, else a scratch copy.
class F32View {
 public:
  F32View(const hlo::Shape& shape) : type_(shape.type), count_(shape.ElementCount()) {
    if (type_ != PrimitiveType::kF32)
      scratch_ = std::make_unique<AlignedBytes>(count_ * static_cast<int64_t>(sizeof(float)));
  }
  // Widens `memory` when needed; returns the f32 data.
  float* Load(uint8_t* memory, ThreadPool* pool) {
    if (!scratch_) return reinterpret_cast<float*>(memory);
    float* out = reinterpret_cast<float*>(scratch_->data());
    const auto* in = reinterpret_cast<const uint16_t*>(memory);
    const bool bf16 = type_ == PrimitiveType::kBF16;
    Parallel(pool, [&](int64_t b, int64_t e) {
      if (bf16) {
        for (int64_t i = b; i < e; ++i) out[i] = WidenBF16(in[i]);
      } else {
        for (int64_t i = b; i < e; ++i) out[i] = hlo::F16ToFloat(in[i]);
      }
    });
    return out;
  }
  float* Target(uint8_t* memory) {
    return scratch_ ? reinterpret_cast<float*>(scratch_->data()) : reinterpret_cast<float*>(memory);
  }
  // Rounds the f32 result into `memory` when it is a 16-bit type.
  void Store(uint8_t* memory, ThreadPool* pool) {
    if (!scratch_) return;
    const float* in = reinterpret_cast<const float*>(scratch_->data());
    auto* out = reinterpret_cast<uint16_t*>(memory);
    const bool bf16 = type_ == PrimitiveType::kBF16;
    Parallel(pool, [&](int64_t b, int64_t e) {
      if (bf16) {
        for (int64_t i = b; i < e; ++i) out[i] = RoundToBF16(in[i]);
      } else {
        for (int64_t i = b; i < e; ++i) out[i] = hlo::FloatToF16(in[i]);
      }
    });
  }

 private:
  template <typename Fn>
  void Parallel(ThreadPool* pool, Fn fn) {
    if (pool == nullptr || count_ < (1 << 16)) {
      fn(0, count_);
      return;
    }
    pool->ParallelFor(count_, 1 << 14, fn);
  }
  PrimitiveType type_;
  int64_t count_;
  std::unique_ptr<AlignedBytes> scratch_;
};

// Binds a tile epilogue to this run's buffers as gemm.h's per-block callback.
class BoundEpilogue {
 public:
  BoundEpilogue(const TileEpilogue* epilogue, const ThunkSequence& sequence) : epilogue_(epilogue) {
    if (epilogue_ == nullptr) return;
    for (int64_t id : epilogue_->buffers) pointers_.push_back(sequence.buffer(id));
  }
  GemmEpilogue callback() {
    if (epilogue_ == nullptr) return {};
    if (epilogue_->function == nullptr)
      throw hlo::Error("cpu backend: epilogue " + epilogue_->symbol + " was not compiled");
    TileFunction function = epilogue_->function;
    void** buffers = pointers_.data();
    return [function, buffers](const GemmBlock& block) {
      function(buffers, block.row, block.rows, block.col, block.cols);
    };
  }

 private:
  const TileEpilogue* epilogue_;
  std::vector<void*> pointers_;
};

class DotThunk final : public Thunk {
 public:
  DotThunk(const hlo::Instruction& dot, std::string name, int64_t lhs, int64_t rhs, int64_t out,
           std::shared_ptr<TileEpilogue> epilogue)
      : Thunk(std::move(name)), epilogue_(std::move(epilogue)), lhs_id_(lhs), rhs_id_(rhs), out_id_(out),
        lhs_(dot.operand(0)->shape()), rhs_(dot.operand(1)->shape()), out_(dot.shape()) {
    const hlo::Shape& a = dot.operand(0)->shape();
    const hlo::Shape& b = dot.operand(1)->shape();
    const size_t r = a.dims.size();
    m_ = a.dims[r - 2];
    k_ = a.dims[r - 1];
    n_ = b.dims[r - 1];
    batch_ = 1;
    for (size_t i = 0; i + 2 < r; ++i) batch_ *= a.dims[i];
  }
  const char* kind() const override { return "gemm"; }
  void Run(ThunkSequence& sequence, RunContext& context) override {
    GemmArgs args;
    args.m = m_;
    args.n = n_;
    args.k = k_;
    args.a = lhs_.Load(sequence.buffer(lhs_id_), context.pool);
    args.lda = k_;
    args.b = rhs_.Load(sequence.buffer(rhs_id_), context.pool);
    args.ldb = n_;
    uint8_t* out = sequence.buffer(out_id_);
    args.c = out_.Target(out);
    args.ldc = n_;
    BoundEpilogue epilogue(epilogue_.get(), sequence);
    args.epilogue = epilogue.callback();
    if (batch_ == 1) {
      Sgemm(args, context.pool);
    } else {
      SgemmBatched(args, batch_, m_ * k_, k_ * n_, m_ * n_, context.pool);
    }
    out_.Store(out, context.pool);
  }

 private:
  std::shared_ptr<TileEpilogue> epilogue_;
  int64_t lhs_id_, rhs_id_, out_id_;
  F32View lhs_, rhs_, out_;
  int64_t m_ = 0, n_ = 0, k_ = 0, batch_ = 1;
};

bool IsNhwcConvolution(const hlo::Instruction& conv) {
  const auto& attrs = conv.attr<hlo::ConvolutionAttrs>();
  const hlo::ConvDimensionNumbers& d = attrs.dnums;
  if (conv.shape().rank() != 4 || attrs.batch_group_count != 1) return false;
  if (d.input_batch != 0 || d.input_feature != 3 || d.input_spatial != std::vector<int64_t>{1, 2})
    return false;
  if (d.kernel_spatial != std::vector<int64_t>{0, 1} || d.kernel_input_feature != 2 ||
      d.kernel_output_feature != 3)
    return false;
  if (d.output_batch != 0 || d.output_feature != 3 ||
      d.output_spatial != std::vector<int64_t>{1, 2})
    return false;
  if (attrs.window.dims.size() != 2) return false;
  for (const hlo::WindowDim& w : attrs.window.dims) {
    if (w.reversal || w.pad_lo < 0 || w.pad_hi < 0 || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1)
      return false;
  }
  return attrs.feature_group_count >= 1;
}

class ConvThunk final : public Thunk {
 public:
  ConvThunk(const hlo::Instruction& conv, std::string name, int64_t in, int64_t filter,
            int64_t out, std::shared_ptr<TileEpilogue> epilogue)
      : Thunk(std::move(name)), epilogue_(std::move(epilogue)), in_id_(in), filter_id_(filter), out_id_(out),
        in_(conv.operand(0)->shape()), filter_(conv.operand(1)->shape()), out_(conv.shape()) {
    const auto& attrs = conv.attr<hlo::ConvolutionAttrs>();
    const auto& x = conv.operand(0)->shape().dims;
    const auto& w = conv.operand(1)->shape().dims;
    const auto& y = conv.shape().dims;
    args_.batch = x[0];
    args_.in_h = x[1];
    args_.in_w = x[2];
    args_.in_c = x[3];
    args_.k_h = w[0];
    args_.k_w = w[1];
    args_.out_c = w[3];
    args_.out_h = y[1];
    args_.out_w = y[2];
    const hlo::WindowDim& h = attrs.window.dims[0];
    const hlo::WindowDim& v = attrs.window.dims[1];
    args_.stride_h = h.stride;
    args_.stride_w = v.stride;
    args_.pad_top = h.pad_lo;
    args_.pad_left = v.pad_lo;
    args_.lhs_dilation_h = h.base_dilation;
    args_.lhs_dilation_w = v.base_dilation;
    args_.rhs_dilation_h = h.window_dilation;
    args_.rhs_dilation_w = v.window_dilation;
    args_.feature_groups = attrs.feature_group_count;
  }
  const char* kind() const override { return "conv"; }
  void Run(ThunkSequence& sequence, RunContext& context) override {
    Conv2DArgs args = args_;
    args.input = in_.Load(sequence.buffer(in_id_), context.pool);
    args.filter = filter_.Load(sequence.buffer(filter_id_), context.pool);
    uint8_t* out = sequence.buffer(out_id_);
    args.output = out_.Target(out);
    BoundEpilogue epilogue(epilogue_.get(), sequence);
    args.epilogue = epilogue.callback();
    Conv2D(args, context.pool);
    out_.Store(out, context.pool);
  }

 private:
  std::shared_ptr<TileEpilogue> epilogue_;
  int64_t in_id_, filter_id_, out_id_;
  F32View in_, filter_, out_;
  Conv2DArgs args_;
};

bool DefaultLayouts(const hlo::Instruction& inst) {
  if (!inst.shape().HasDefaultLayout()) return false;
  for (const hlo::Instruction* operand : inst.operands())
    if (!operand->shape().IsArray() || !operand->shape().HasDefaultLayout()) return false;
  return true;
}

}  // namespace

bool SupportsTileEpilogue(const hlo::Instruction& contraction) {
  if (contraction.shape().type != PrimitiveType::kF32) return false;  // C is the result itself
  if (contraction.opcode() == hlo::Opcode::kDot) return contraction.shape().rank() == 2;
  return contraction.opcode() == hlo::Opcode::kConvolution;
}

std::unique_ptr<Thunk> MakeContractionThunk(const hlo::Instruction& contraction,
                                            const std::string& name, int64_t lhs, int64_t rhs,
                                            int64_t output, std::shared_ptr<TileEpilogue> epilogue) {
  if (contraction.operand_count() != 2 || !DefaultLayouts(contraction)) return nullptr;
  for (const hlo::Instruction* operand : contraction.operands())
    if (!IsGemmType(operand->shape().type)) return nullptr;
  if (!IsGemmType(contraction.shape().type)) return nullptr;
  if (epilogue && !SupportsTileEpilogue(contraction)) return nullptr;
  if (contraction.opcode() == hlo::Opcode::kDot) {
    if (!compiler::IsCanonicalDot(contraction)) return nullptr;
    return std::make_unique<DotThunk>(contraction, name, lhs, rhs, output, std::move(epilogue));
  }
  if (contraction.opcode() == hlo::Opcode::kConvolution) {
    if (!IsNhwcConvolution(contraction)) return nullptr;
    return std::make_unique<ConvThunk>(contraction, name, lhs, rhs, output, std::move(epilogue));
  }
  return nullptr;
}

}  // namespace cpu
