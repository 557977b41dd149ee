// The matrix unit's data effects (functional.h): mxu.ldw, mxu.matmul, mxu.conv. The arithmetic
// is numeric_mxu.h's (shared with the processing-element reference model); this file gathers
// the operands' bytes from the unified buffer, applies the stride registers and the implicit
// im2col, and writes the accumulators. Rows are multiplied in blocks of 64 and land in
// increasing order, so host memory stays O(64 k + k n) whatever m is, and overlapping
// destination rows resolve in row order.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "simulator/functional.h"
#include "simulator/numeric_mxu.h"

namespace simulator {
namespace {

using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// The dtype field, checked against the ISA and the configured array.dtypes.
Dtype MxuDtype(const Instruction& inst, uint64_t raw, const systolic::ArchConfig& config) {
  const std::string mnemonic(systolic::GetInstrInfo(inst.opcode).mnemonic);
  if (raw >= systolic::DtypeSymbols().size()) {
    throw hlo::Error(mnemonic + ": dtype " + std::to_string(raw) + " is not a dtype");
  }
  const Dtype dtype = static_cast<Dtype>(raw);
  if (!IsMxuDtype(dtype)) {
    throw hlo::Error(mnemonic + ": the matrix unit multiplies s8, bf16 or f32, not " +
                     std::string(systolic::DtypeName(dtype)));
  }
  const uint32_t bit = dtype == Dtype::kS8     ? systolic::kMxuInt8
                       : dtype == Dtype::kBf16 ? systolic::kMxuBf16
                                               : systolic::kMxuF32;
  if ((config.mxu_dtypes & bit) == 0) {
    throw hlo::Error(mnemonic + ": this array (array.dtypes) does not support " +
                     std::string(systolic::DtypeName(dtype)));
  }
  return dtype;
}

void RequireMemory(const Instruction& inst, const char* field, uint64_t address, bool acc) {
  if (((address & systolic::kAccumulatorBit) != 0) == acc) return;
  throw hlo::Error(std::string(systolic::GetInstrInfo(inst.opcode).mnemonic) + ": " + field +
                   " must be " + (acc ? "an accumulator (acc:)" : "a unified buffer (ub:)") +
                   " address, got " + Hex(address));
}

// Reads `count` elements at an offset of `memory` as bit patterns.
void ReadElements(const LocalMemory& memory, uint64_t offset, int64_t count, Dtype dtype,
                  uint32_t* out) {
  const int bytes = systolic::DtypeBytes(dtype);
  std::span<const uint8_t> data = memory.Read(offset, static_cast<uint64_t>(count * bytes));
  LoadBitsArray(dtype, data.data(), count, out);
}

uint64_t StrideOr(uint32_t reg, uint64_t packed) { return reg != 0 ? reg : packed; }

void LoadWeights(const Instruction& inst, const systolic::ArchConfig& config,
                 const RegisterFile& registers, WeightBuffers& weights, Memories& memories) {
  using F = systolic::MxuLoadWeightsField;
  const Dtype dtype = MxuDtype(inst, inst.get(F::dtype), config);
  const int64_t k = static_cast<int64_t>(inst.get(F::k));
  const int64_t n = static_cast<int64_t>(inst.get(F::n));
  if (k < 1 || k > config.array_rows || n < 1 || n > config.array_cols) {
    throw hlo::Error("mxu.ldw: a " + std::to_string(k) + " x " + std::to_string(n) +
                     " weight tile does not fit the " + std::to_string(config.array_rows) + " x " +
                     std::to_string(config.array_cols) + " array (need 1 <= k <= R, 1 <= n <= C)");
  }
  const uint64_t src = inst.get(F::src);
  RequireMemory(inst, "src", src, false);
  const int bytes = systolic::DtypeBytes(dtype);
  const uint64_t row_bytes = static_cast<uint64_t>(n * bytes);
  const uint64_t stride = StrideOr(registers[static_cast<int>(systolic::ConfigRegister::kMxuSrcRowStride)], row_bytes);
  WeightBuffers::Buffer& buffer = weights.buffers[inst.get(F::buf) & 1];
  std::vector<uint8_t> bytes_read;
  bytes_read.reserve(static_cast<size_t>(k) * row_bytes);  // appended, never zeroed first
  for (int64_t r = 0; r < k; ++r) {
    std::span<const uint8_t> row = memories.ub.Read(Memories::LocalOffset(src) + r * stride, row_bytes);
    bytes_read.insert(bytes_read.end(), row.begin(), row.end());
  }
  buffer = WeightBuffers::Buffer{true, k, n, dtype, std::move(bytes_read)};
}

const WeightBuffers::Buffer& LoadedBuffer(const Instruction& inst, uint64_t buf, uint64_t dtype_raw,
                                          const systolic::ArchConfig& config,
                                          const WeightBuffers& weights) {
  const std::string mnemonic(systolic::GetInstrInfo(inst.opcode).mnemonic);
  const Dtype dtype = MxuDtype(inst, dtype_raw, config);
  const WeightBuffers::Buffer& buffer = weights.buffers[buf & 1];
  if (!buffer.loaded) {
    throw hlo::Error(mnemonic + ": weight buffer " + std::to_string(buf & 1) +
                     " was never loaded (mxu.ldw)");
  }
  if (buffer.dtype != dtype) {
    throw hlo::Error(mnemonic + ": activations are " + std::string(systolic::DtypeName(dtype)) +
                     " but weight buffer " + std::to_string(buf & 1) + " holds " +
                     std::string(systolic::DtypeName(buffer.dtype)));
  }
  return buffer;
}

// Collects activation rows (k elements each, as raw UB bytes) with their accumulator offsets
// and multiplies kBlockRows of them per MxuGemmElements call, so host memory stays bounded
// whatever m is and the buffers are allocated once per instruction. Rows land in the order they
// were added.
class RowBatcher {
 public:
  static constexpr int64_t kBlockRows = 64;
  RowBatcher(const WeightBuffers::Buffer& buffer, bool accumulate, Memories& memories)
      : buffer_(buffer), accumulate_(accumulate), memories_(memories),
        row_bytes_(static_cast<size_t>(buffer.k * systolic::DtypeBytes(buffer.dtype))),
        n_(static_cast<size_t>(buffer.n)),
        rows_(std::make_unique_for_overwrite<uint8_t[]>(kBlockRows * row_bytes_)),
        sums_(std::make_unique_for_overwrite<uint32_t[]>(kBlockRows * n_)),
        merged_(std::make_unique_for_overwrite<uint32_t[]>(n_)) {
    if (buffer.bytes.size() < row_bytes_ * n_) {  // k x n elements, as mxu.ldw stores them
      throw hlo::Error("weight buffer holds " + std::to_string(buffer.bytes.size()) +
                       " bytes, fewer than its " + std::to_string(buffer.k) + " x " +
                       std::to_string(buffer.n) + " tile");
    }
  }

  // Where to put the next row's k elements (row_bytes() bytes); its result goes to accumulator
  // offset `dst`.
  uint8_t* NextRow(uint64_t dst) {
    if (count_ == kBlockRows) Flush();
    destinations_[count_] = dst;
    return &rows_[static_cast<size_t>(count_++) * row_bytes_];
  }
  size_t row_bytes() const { return row_bytes_; }

  void Flush() {
    MxuGemmElements(buffer_.dtype, count_, buffer_.k, buffer_.n, rows_.get(), buffer_.bytes.data(),
                    sums_.get());
    const uint64_t out_bytes = n_ * 4;
    // Read, then write, row by row: overlapping destination rows resolve in row order.
    for (int64_t r = 0; r < count_; ++r) {
      std::span<const uint32_t> row_sums(&sums_[static_cast<size_t>(r) * n_], n_);
      if (accumulate_) {
        ReadElements(memories_.acc, destinations_[r], buffer_.n, Dtype::kS32, merged_.get());
        std::span<uint32_t> merged(merged_.get(), n_);
        MxuAccumulateRow(buffer_.dtype, merged, row_sums);
        row_sums = merged;
      }
      std::span<uint8_t> out = memories_.acc.Write(destinations_[r], out_bytes);
      StoreBitsArray(Dtype::kS32, out.data(), buffer_.n, row_sums.data());
    }
    count_ = 0;
  }

 private:
  const WeightBuffers::Buffer& buffer_;
  bool accumulate_;
  Memories& memories_;
  size_t row_bytes_, n_;
  int64_t count_ = 0;  // rows collected
  std::array<uint64_t, kBlockRows> destinations_{};
  // Scratch, fully written before it is read: no need to zero it.
  std::unique_ptr<uint8_t[]> rows_;     // kBlockRows x row_bytes_
  std::unique_ptr<uint32_t[]> sums_;    // kBlockRows x n_ column sums
  std::unique_ptr<uint32_t[]> merged_;  // one accumulator row, for acc=1
};

// Copies `length` UB bytes at `offset` into `out`.
void CopyUb(const Memories& memories, uint64_t offset, size_t length, uint8_t* out) {
  std::span<const uint8_t> data = memories.ub.Read(offset, length);
  std::memcpy(out, data.data(), length);
}

void Matmul(const Instruction& inst, const systolic::ArchConfig& config,
            const RegisterFile& registers, const WeightBuffers& weights, Memories& memories) {
  using F = systolic::MxuMatmulField;
  const WeightBuffers::Buffer& buffer =
      LoadedBuffer(inst, inst.get(F::buf), inst.get(F::dtype), config, weights);
  const int64_t m = static_cast<int64_t>(inst.get(F::m));
  if (m < 1) throw hlo::Error("mxu.matmul: m must be at least 1");
  const uint64_t src = inst.get(F::src), dst = inst.get(F::dst);
  RequireMemory(inst, "src", src, false);
  RequireMemory(inst, "dst", dst, true);
  const uint64_t src_stride = StrideOr(
      registers[static_cast<int>(systolic::ConfigRegister::kMxuSrcRowStride)],
      static_cast<uint64_t>(buffer.k * systolic::DtypeBytes(buffer.dtype)));
  const uint64_t dst_stride = StrideOr(
      registers[static_cast<int>(systolic::ConfigRegister::kMxuDstRowStride)],
      static_cast<uint64_t>(buffer.n * 4));
  RowBatcher batcher(buffer, inst.get(F::acc) != 0, memories);
  for (int64_t i = 0; i < m; ++i) {
    uint8_t* row = batcher.NextRow(Memories::LocalOffset(dst) + i * dst_stride);
    CopyUb(memories, Memories::LocalOffset(src) + i * src_stride, batcher.row_bytes(), row);
  }
  batcher.Flush();
}

// Valid 2-D convolution with implicit im2col: output pixel (oh, ow) is GEMM row oh*out_w + ow,
// whose k = kh*kw*cin entries are input (oh*stride + dh, ow*stride + dw, c) in (dh, dw, c) order.
void Conv(const Instruction& inst, const systolic::ArchConfig& config,
          const RegisterFile& registers, const WeightBuffers& weights, Memories& memories) {
  using F = systolic::MxuConvField;
  const WeightBuffers::Buffer& buffer =
      LoadedBuffer(inst, inst.get(F::buf), inst.get(F::dtype), config, weights);
  const int64_t in_h = static_cast<int64_t>(inst.get(F::in_h));
  const int64_t in_w = static_cast<int64_t>(inst.get(F::in_w));
  const int64_t kh = static_cast<int64_t>(inst.get(F::kh));
  const int64_t kw = static_cast<int64_t>(inst.get(F::kw));
  const int64_t stride = static_cast<int64_t>(inst.get(F::stride));
  if (kh < 1 || kw < 1 || stride < 1) {
    throw hlo::Error("mxu.conv: kh, kw and stride must be at least 1");
  }
  if (in_h < kh || in_w < kw) {
    throw hlo::Error("mxu.conv: the " + std::to_string(kh) + "x" + std::to_string(kw) +
                     " kernel is larger than the " + std::to_string(in_h) + "x" +
                     std::to_string(in_w) + " input tile");
  }
  if (buffer.k % (kh * kw) != 0) {
    throw hlo::Error("mxu.conv: the weight tile's k=" + std::to_string(buffer.k) +
                     " is not a multiple of kh*kw=" + std::to_string(kh * kw));
  }
  const int64_t cin = buffer.k / (kh * kw);
  const int64_t out_h = (in_h - kh) / stride + 1, out_w = (in_w - kw) / stride + 1;
  const uint64_t src = inst.get(F::src), dst = inst.get(F::dst);
  RequireMemory(inst, "src", src, false);
  RequireMemory(inst, "dst", dst, true);
  const int bytes = systolic::DtypeBytes(buffer.dtype);
  // mxu.src_row_stride: UB bytes between input image rows (packed: in_w * cin elements).
  const uint64_t image_row = StrideOr(
      registers[static_cast<int>(systolic::ConfigRegister::kMxuSrcRowStride)],
      static_cast<uint64_t>(in_w * cin * bytes));
  const uint64_t dst_stride = StrideOr(
      registers[static_cast<int>(systolic::ConfigRegister::kMxuDstRowStride)],
      static_cast<uint64_t>(buffer.n * 4));
  RowBatcher batcher(buffer, inst.get(F::acc) != 0, memories);
  for (int64_t oh = 0; oh < out_h; ++oh) {
    for (int64_t ow = 0; ow < out_w; ++ow) {
      uint8_t* row = batcher.NextRow(Memories::LocalOffset(dst) + (oh * out_w + ow) * dst_stride);
      const auto run_bytes = static_cast<size_t>(kw * cin * bytes);
      for (int64_t dh = 0; dh < kh; ++dh) {  // one contiguous kw*cin run per kernel row
        const uint64_t offset = Memories::LocalOffset(src) + (oh * stride + dh) * image_row +
                                static_cast<uint64_t>(ow * stride * cin * bytes);
        CopyUb(memories, offset, run_bytes, row + dh * run_bytes);
      }
    }
  }
  batcher.Flush();
}

}  // namespace

namespace mxu_internal {

void ExecuteLoadWeights(const Instruction& inst, const systolic::ArchConfig& config,
                        const RegisterFile& registers, WeightBuffers& weights, Memories& memories) {
  LoadWeights(inst, config, registers, weights, memories);
}
void ExecuteMatmul(const Instruction& inst, const systolic::ArchConfig& config,
                   const RegisterFile& registers, WeightBuffers& weights, Memories& memories) {
  Matmul(inst, config, registers, weights, memories);
}
void ExecuteConv(const Instruction& inst, const systolic::ArchConfig& config,
                 const RegisterFile& registers, WeightBuffers& weights, Memories& memories) {
  Conv(inst, config, registers, weights, memories);
}

}  // namespace mxu_internal

}  // namespace simulator
