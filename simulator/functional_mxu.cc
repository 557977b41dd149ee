// The matrix unit's data effects (functional.h): mxu.ldw, mxu.matmul, mxu.conv. The arithmetic
// is numeric_mxu.h's (shared with the processing-element reference model); this file gathers
// the operands from the unified buffer, applies the stride registers and the implicit im2col, and
// writes the accumulators. Rows are multiplied in blocks of 64 and land in increasing order, so
// host memory stays O(64 k + k n) whatever m is, and overlapping destination rows resolve in row
// order.
#include <algorithm>
#include <cstdio>
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

// Reads `count` elements at a UB offset as bit patterns.
void ReadElements(const LocalMemory& memory, uint64_t offset, int64_t count, Dtype dtype,
                  uint32_t* out) {
  const int bytes = systolic::DtypeBytes(dtype);
  std::span<const uint8_t> data = memory.Read(offset, static_cast<uint64_t>(count * bytes));
  for (int64_t i = 0; i < count; ++i) out[i] = LoadBits(dtype, data.data() + i * bytes);
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
  std::vector<uint8_t> bytes_read(static_cast<size_t>(k) * row_bytes);
  for (int64_t r = 0; r < k; ++r) {
    std::span<const uint8_t> row = memories.ub.Read(Memories::LocalOffset(src) + r * stride, row_bytes);
    std::copy(row.begin(), row.end(), bytes_read.begin() + r * row_bytes);
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

std::vector<uint32_t> WeightBits(const WeightBuffers::Buffer& buffer) {
  std::vector<uint32_t> bits(static_cast<size_t>(buffer.k * buffer.n));
  const int bytes = systolic::DtypeBytes(buffer.dtype);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = LoadBits(buffer.dtype, &buffer.bytes[i * bytes]);
  return bits;
}

// Collects activation rows (k elements each) with their accumulator offsets and multiplies
// kBlockRows of them per MxuGemm call, so the weights are decoded once per block rather than
// once per row, while host memory stays bounded whatever m is. Rows land in the order they were
// added.
class RowBatcher {
 public:
  static constexpr int64_t kBlockRows = 64;
  RowBatcher(const WeightBuffers::Buffer& buffer, bool accumulate, Memories& memories)
      : buffer_(buffer), accumulate_(accumulate), memories_(memories),
        weight_bits_(WeightBits(buffer)) {}

  // Where to put the next row's k elements; its result goes to accumulator offset `dst`.
  uint32_t* NextRow(uint64_t dst) {
    if (static_cast<int64_t>(destinations_.size()) == kBlockRows) Flush();
    destinations_.push_back(dst);
    rows_.resize(destinations_.size() * static_cast<size_t>(buffer_.k));
    return &rows_[(destinations_.size() - 1) * static_cast<size_t>(buffer_.k)];
  }

  void Flush() {
    const int64_t count = static_cast<int64_t>(destinations_.size());
    const std::vector<uint32_t> sums =
        MxuGemm(buffer_.dtype, count, buffer_.k, buffer_.n, rows_, weight_bits_);
    const uint64_t out_bytes = static_cast<uint64_t>(buffer_.n) * 4;
    std::vector<uint32_t> old(static_cast<size_t>(buffer_.n), 0);
    for (int64_t r = 0; r < count; ++r) {
      if (accumulate_) ReadElements(memories_.acc, destinations_[r], buffer_.n, Dtype::kS32, old.data());
      std::span<uint8_t> out = memories_.acc.Write(destinations_[r], out_bytes);
      for (int64_t j = 0; j < buffer_.n; ++j) {
        StoreBits(Dtype::kS32, out.data() + 4 * j,
                  MxuAccumulate(buffer_.dtype, accumulate_, old[j], sums[r * buffer_.n + j]));
      }
    }
    destinations_.clear();
    rows_.clear();
  }

 private:
  const WeightBuffers::Buffer& buffer_;
  bool accumulate_;
  Memories& memories_;
  std::vector<uint32_t> weight_bits_;
  std::vector<uint64_t> destinations_;
  std::vector<uint32_t> rows_;
};

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
    uint32_t* row = batcher.NextRow(Memories::LocalOffset(dst) + i * dst_stride);
    ReadElements(memories.ub, Memories::LocalOffset(src) + i * src_stride, buffer.k, buffer.dtype,
                 row);
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
      uint32_t* row = batcher.NextRow(Memories::LocalOffset(dst) + (oh * out_w + ow) * dst_stride);
      for (int64_t dh = 0; dh < kh; ++dh) {  // one contiguous kw*cin run per kernel row
        const uint64_t offset = Memories::LocalOffset(src) + (oh * stride + dh) * image_row +
                                static_cast<uint64_t>(ow * stride * cin * bytes);
        ReadElements(memories.ub, offset, kw * cin, buffer.dtype, row + dh * kw * cin);
      }
    }
  }
  batcher.Flush();
}

}  // namespace

void ExecuteMxu(const Instruction& inst, const systolic::ArchConfig& config,
                const RegisterFile& registers, WeightBuffers& weights, Memories& memories) {
  switch (inst.opcode) {
    case Opcode::kMxuLoadWeights: return LoadWeights(inst, config, registers, weights, memories);
    case Opcode::kMxuMatmul: return Matmul(inst, config, registers, weights, memories);
    case Opcode::kMxuConv: return Conv(inst, config, registers, weights, memories);
    default:
      break;
  }
  throw hlo::Error(std::string(systolic::GetInstrInfo(inst.opcode).mnemonic) +
                   " is not a matrix-unit instruction");
}

}  // namespace simulator
