// Dot / convolution thunks over gemm.h (see contraction_thunks.h).
#include "targets/cpu/contraction_thunks.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "compiler/passes/dot_canonicalizer.h"
#include "targets/cpu/gemm_rows.h"
#include "targets/cpu/vector_clones.h"
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

// The conversion loops over whole rows, compiled for AVX-512 and AVX2 next to the baseline
// (vector_clones.h): a fifth of mha_block's profile was them in 4-wide SSE2.
RETARGET_VECTOR_CLONES void WidenBF16Row(const uint16_t* __restrict in, float* __restrict out,
                                         int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = WidenBF16(in[i]);
}
RETARGET_VECTOR_CLONES void RoundBF16Row(const float* __restrict in, uint16_t* __restrict out,
                                         int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = RoundToBF16(in[i]);
}

// C = A * B for one tiny row-major matrix (the batched-dot loop below), k in increasing order.
RETARGET_VECTOR_CLONES void TinyGemm(const float* __restrict a, const float* __restrict b,
                                     float* __restrict c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    float* __restrict row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float scale = a[i * k + p];
      const float* __restrict b_row = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += scale * b_row[j];
    }
  }
}

bool IsGemmType(PrimitiveType type) {
  return type == PrimitiveType::kF32 || type == PrimitiveType::kBF16 ||
         type == PrimitiveType::kF16;
}

// An operand or result as f32: its own memory when it is f32, else a scratch copy. Scratch of
// up to kKeptScratchBytes is kept from run to run; a larger one exists only while its thunk
// runs (Release), since a bf16 LLM's weights would otherwise each keep an f32 copy — twice the
// model again, which a 24 GB machine running an 11 GB model does not have.
class F32View {
 public:
  static constexpr int64_t kKeptScratchBytes = int64_t{64} << 20;
  // The scratch is allocated by the first run that needs it (a dot that reads its rhs in place
  // never does).
  F32View(const hlo::Shape& shape) : type_(shape.type), count_(shape.ElementCount()) {}
  // Widens `memory` when needed; returns the f32 data.
  float* Load(uint8_t* memory, ThreadPool* pool) {
    if (!widened()) return reinterpret_cast<float*>(memory);
    float* out = Scratch();
    const auto* in = reinterpret_cast<const uint16_t*>(memory);
    const bool bf16 = type_ == PrimitiveType::kBF16;
    Parallel(pool, [&](int64_t b, int64_t e) {
      if (bf16) {
        WidenBF16Row(in + b, out + b, e - b);
      } else {
        for (int64_t i = b; i < e; ++i) out[i] = hlo::F16ToFloat(in[i]);
      }
    });
    return out;
  }
  // Rounds one finished GEMM block (rows x cols at block.c, leading dimension block.ldc) into
  // `memory` at row `first_row` of the result viewed as rows x ldc: the per-block epilogue then
  // reads the rounded values while they are in cache (no-op for an f32 result).
  void StoreBlock(uint8_t* memory, const GemmBlock& block, int64_t first_row) const {
    if (!widened()) return;
    auto* out = reinterpret_cast<uint16_t*>(memory);
    const bool bf16 = type_ == PrimitiveType::kBF16;
    for (int64_t r = 0; r < block.rows; ++r) {
      const float* in = block.c + r * block.ldc;
      uint16_t* row = out + (first_row + r) * block.ldc + block.col;
      if (bf16) {
        RoundBF16Row(in, row, block.cols);
      } else {
        for (int64_t c = 0; c < block.cols; ++c) row[c] = hlo::FloatToF16(in[c]);
      }
    }
  }
  float* Target(uint8_t* memory) {
    return widened() ? Scratch() : reinterpret_cast<float*>(memory);
  }
  // Rounds the f32 result into `memory` when it is a 16-bit type.
  void Store(uint8_t* memory, ThreadPool* pool) {
    if (!widened()) return;
    const float* in = Scratch();
    auto* out = reinterpret_cast<uint16_t*>(memory);
    const bool bf16 = type_ == PrimitiveType::kBF16;
    Parallel(pool, [&](int64_t b, int64_t e) {
      if (bf16) {
        RoundBF16Row(in + b, out + b, e - b);
      } else {
        for (int64_t i = b; i < e; ++i) out[i] = hlo::FloatToF16(in[i]);
      }
    });
  }

  // Frees a scratch too large to keep between runs (its thunk has finished with it).
  void Release() {
    if (ScratchBytes() > kKeptScratchBytes) scratch_.reset();
  }

 private:
  bool widened() const { return type_ != PrimitiveType::kF32; }
  int64_t ScratchBytes() const { return count_ * static_cast<int64_t>(sizeof(float)); }
  float* Scratch() {
    if (!scratch_) scratch_ = std::make_unique<AlignedBytes>(ScratchBytes());
    return reinterpret_cast<float*>(scratch_->data());
  }
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
  // Per block: round it into the 16-bit result first when there is one (`result`), then run
  // the tile kernel on the block's rows of the result viewed as (batch * m) x n.
  GemmEpilogue callback(const F32View* result = nullptr, uint8_t* memory = nullptr,
                        int64_t rows_per_batch = 0) {
    if (epilogue_ == nullptr) return {};
    if (epilogue_->function == nullptr)
      throw hlo::Error("cpu backend: epilogue " + epilogue_->symbol + " was not compiled");
    TileFunction function = epilogue_->function;
    void** buffers = pointers_.data();
    return [function, buffers, result, memory, rows_per_batch](const GemmBlock& block) {
      const int64_t row = block.batch * rows_per_batch + block.row;
      if (result != nullptr) result->StoreBlock(memory, block, row);
      function(buffers, row, block.rows, block.col, block.cols);
    };
  }

 private:
  const TileEpilogue* epilogue_;
  std::vector<void*> pointers_;
};

class DotThunk final : public Thunk {
 public:
  DotThunk(const hlo::Instruction& dot, std::string name, int64_t lhs, int64_t rhs, int64_t out,
           std::shared_ptr<TileEpilogue> epilogue, bool lhs_transposed, bool rhs_transposed)
      : Thunk(std::move(name)), epilogue_(std::move(epilogue)), lhs_id_(lhs), rhs_id_(rhs), out_id_(out),
        lhs_(dot.operand(0)->shape()), rhs_(dot.operand(1)->shape()), out_(dot.shape()),
        rhs_type_(dot.operand(1)->shape().type), lhs_transposed_(lhs_transposed),
        rhs_transposed_(rhs_transposed) {
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
    // A transposed lhs ([batch..., k, m] in memory) is A transposed with m elements per row.
    args.trans_a = lhs_transposed_;
    args.lda = lhs_transposed_ ? m_ : k_;
    uint8_t* out = sequence.buffer(out_id_);
    args.c = out_.Target(out);
    args.ldc = n_;
    BoundEpilogue epilogue(epilogue_.get(), sequence);
    args.epilogue = epilogue.callback(&out_, out, m_);
    if (ReadsRhsRowsInPlace()) {
      TransposedRowsArgs rows;
      rows.m = m_;
      rows.n = n_;
      rows.k = k_;
      rows.a = args.a;
      rows.lda = k_;
      rows.b = sequence.buffer(rhs_id_);
      rows.b_bf16 = rhs_type_ == PrimitiveType::kBF16;
      rows.c = args.c;
      rows.ldc = n_;
      rows.epilogue = args.epilogue;
      GemmTransposedRows(rows, context.pool);
      if (!epilogue_) out_.Store(out, context.pool);
      for (F32View* view : {&lhs_, &out_}) view->Release();
      return;
    }
    args.b = rhs_.Load(sequence.buffer(rhs_id_), context.pool);
    // A transposed rhs ([batch..., n, k] in memory) is B transposed with k elements per row.
    args.trans_b = rhs_transposed_;
    args.ldb = rhs_transposed_ ? k_ : n_;
    if (batch_ > 1 && m_ * n_ * k_ <= kTinyGemm && !lhs_transposed_ && !rhs_transposed_) {
      TinyBatched(args, context.pool);
    } else if (batch_ == 1) {
      Sgemm(args, context.pool);
    } else {
      SgemmBatched(args, batch_, m_ * k_, k_ * n_, m_ * n_, context.pool);
    }
    if (!epilogue_) out_.Store(out, context.pool);  // else rounded block by block
    for (F32View* view : {&lhs_, &rhs_, &out_}) view->Release();
  }

  // Batches of tiny matrices (DLRM's feature interaction: 3616 x [6,8]x[8,6]) cost more in
  // the blocked GEMM's per-call packing and dispatch than in arithmetic: a direct loop per
  // batch, k in increasing order (the GEMM's accumulation order), batches over the pool.
  static constexpr int64_t kTinyGemm = 4096;
  void TinyBatched(const GemmArgs& args, ThreadPool* pool) const {
    const int64_t m = m_, n = n_, k = k_;
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t batch = begin; batch < end; ++batch) {
        float* c = args.c + batch * m * n;
        TinyGemm(args.a + batch * m * k, args.b + batch * k * n, c, m, n, k);
        if (args.epilogue) {
          GemmBlock block;
          block.rows = m;
          block.cols = n;
          block.c = c;
          block.ldc = n;
          block.batch = batch;
          args.epilogue(block);
        }
      }
    };
    const int64_t min_batches = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(m * n * k, 1));
    if (pool != nullptr) {
      pool->ParallelFor(batch_, min_batches, run);
    } else {
      run(0, batch_);
    }
  }

 private:
  // A few rows against a transposed f32/bf16 rhs: its rows are read where they are, not widened
  // into a copy (gemm_rows.h).
  bool ReadsRhsRowsInPlace() const {
    return rhs_transposed_ && !lhs_transposed_ && batch_ == 1 && m_ <= kTransposedRowsMaxM &&
           (rhs_type_ == PrimitiveType::kF32 || rhs_type_ == PrimitiveType::kBF16);
  }

  std::shared_ptr<TileEpilogue> epilogue_;
  int64_t lhs_id_, rhs_id_, out_id_;
  F32View lhs_, rhs_, out_;
  PrimitiveType rhs_type_;
  bool lhs_transposed_, rhs_transposed_;
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
    args.epilogue = epilogue.callback(&out_, out, 0);
    Conv2D(args, context.pool);
    if (!epilogue_) out_.Store(out, context.pool);  // else rounded block by block
    for (F32View* view : {&in_, &filter_, &out_}) view->Release();
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

// Two operands and a result of GEMM element types, all in default layouts.
bool GemmTypesAndLayouts(const hlo::Instruction& contraction) {
  if (contraction.operand_count() != 2 || !DefaultLayouts(contraction)) return false;
  for (const hlo::Instruction* operand : contraction.operands())
    if (!IsGemmType(operand->shape().type)) return false;
  return IsGemmType(contraction.shape().type);
}

}  // namespace

bool SupportsTileEpilogue(const hlo::Instruction& contraction) {
  // A 16-bit result is rounded block by block before the epilogue reads it; a batched dot's
  // blocks are rows batch * m + row of the result viewed as a matrix.
  if (!IsGemmType(contraction.shape().type)) return false;
  if (contraction.opcode() == hlo::Opcode::kDot) return contraction.shape().rank() >= 2;
  return contraction.opcode() == hlo::Opcode::kConvolution;
}

bool GemmCoversDot(const hlo::Instruction& dot) {
  return dot.opcode() == hlo::Opcode::kDot && GemmTypesAndLayouts(dot) &&
         compiler::IsCanonicalDot(dot);
}

std::unique_ptr<Thunk> MakeContractionThunk(const hlo::Instruction& contraction,
                                            const std::string& name, int64_t lhs, int64_t rhs,
                                            int64_t output, std::shared_ptr<TileEpilogue> epilogue,
                                            bool lhs_transposed, bool rhs_transposed) {
  if (!GemmTypesAndLayouts(contraction)) return nullptr;
  if (epilogue && !SupportsTileEpilogue(contraction)) return nullptr;
  if (contraction.opcode() == hlo::Opcode::kDot) {
    if (!compiler::IsCanonicalDot(contraction)) return nullptr;
    return std::make_unique<DotThunk>(contraction, name, lhs, rhs, output, std::move(epilogue),
                                      lhs_transposed, rhs_transposed);
  }
  if (contraction.opcode() == hlo::Opcode::kConvolution) {
    if (!IsNhwcConvolution(contraction)) return nullptr;
    return std::make_unique<ConvThunk>(contraction, name, lhs, rhs, output, std::move(epilogue));
  }
  return nullptr;
}

}  // namespace cpu
