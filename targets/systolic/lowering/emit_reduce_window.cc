// EmitReduceWindow (emit_reduce_window.h).
#include "targets/systolic/lowering/emit_reduce_window.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "hlo/literal.h"
#include "targets/systolic/lowering/emit_block_copy.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/native_ops.h"
#include "targets/systolic/lowering/row_op_table.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;

// Floor division for a possibly negative numerator and a positive divisor.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// What is folded: the operand's shape and the result's, a window dimension per operand
// dimension, the element types, the accumulator's start and the padding's fill, the fold.
struct WindowFold {
  hlo::Shape in, out;
  std::vector<hlo::WindowDim> window;
  Dtype in_dtype = Dtype::kF32, acc_dtype = Dtype::kF32, out_dtype = Dtype::kF32;
  uint32_t init_bits = 0;  // the accumulator's start (acc_dtype)
  uint32_t pad_bits = 0;   // what a padded input reads as (in_dtype)
  Opcode combine = Opcode::kVAdd;
  std::optional<uint64_t> weights;  // DRAM: per tap, one weight per channel (in_dtype)
};

bool EmitWindowFold(ProgramBuilder& builder, const WindowFold& fold, const ArchConfig& config,
                    uint64_t operand, uint64_t result, std::string* why) {
  const hlo::Shape& in = fold.in;
  const hlo::Shape& out = fold.out;
  const size_t rank = in.dims.size();
  const int64_t b = DtypeBytes(fold.in_dtype);
  const int64_t acc_b = DtypeBytes(fold.acc_dtype);
  const int64_t out_b = DtypeBytes(fold.out_dtype);
  const std::vector<int64_t> in_strides = hlo::RowMajorStrides(in.dims);
  const int64_t channels = out.dims.back();
  const bool convert = fold.acc_dtype != fold.in_dtype;
  // Bytes per element of a tile: the accumulator and the tap's box, with weights also the box
  // in f32 and the broadcast weights, and the result converted back.
  const int64_t per_element = acc_b + b + (fold.weights ? 2 * acc_b : 0) +
                              (fold.out_dtype != fold.acc_dtype ? out_b : 0);
  const int64_t half = AlignedHalf(config.ub_bytes);
  const int64_t row_bytes =
      fold.weights ? AlignedLocal(channels * b) + AlignedLocal(channels * acc_b) : 0;
  const int64_t budget = half - row_bytes - 6 * kLocalAlignment;
  // Tiles: ranges of dimension t_dim for one index of every dimension before it (a contiguous
  // run of the result), t_dim the first one longer than one whose index fits the budget. With
  // weights the channels stay whole (they are the broadcast's columns).
  const size_t last_tiled = fold.weights ? rank - 2 : rank - 1;
  size_t t_dim = 0;
  while (t_dim < last_tiled && out.dims[t_dim] == 1) ++t_dim;
  auto slice_of = [&](size_t dim) {  // elements per index of `dim`
    int64_t slice = 1;
    for (size_t d = dim + 1; d < rank; ++d) slice *= out.dims[d];
    return slice;
  };
  while (t_dim < last_tiled && slice_of(t_dim) * per_element > budget) ++t_dim;
  const int64_t slice = slice_of(t_dim);
  const int64_t per_tile = std::min(out.dims[t_dim], budget / (slice * per_element));
  if (per_tile <= 0 || slice > (int64_t{1} << 20) || (fold.weights && channels > 65535)) {
    *why = "one slice of the window fold's result and its buffers exceed half the UB";
    return false;
  }
  int64_t taps = 1;
  for (const hlo::WindowDim& d : fold.window) taps *= d.size;
  int64_t outer = 1;  // indices of the dimensions before t_dim
  for (size_t d = 0; d < t_dim; ++d) outer *= out.dims[d];
  const int64_t ranges = (out.dims[t_dim] + per_tile - 1) / per_tile;
  const int64_t tiles = outer * ranges;
  // The vector unit writes first: after the load unit passed the segment's op-order wait.
  builder.Signal(Unit::kLoad, Unit::kVector);
  builder.Wait(Unit::kLoad, Unit::kVector);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t o = t / ranges;
    const int64_t a = t % ranges * per_tile, count = std::min(per_tile, out.dims[t_dim] - a);
    const int64_t elements = count * slice;
    std::vector<int64_t> tile_start(rank, 0);  // the tile's first result index
    tile_start[t_dim] = a;
    for (int64_t d = static_cast<int64_t>(t_dim) - 1, rest = o; d >= 0; --d) {
      tile_start[static_cast<size_t>(d)] = rest % out.dims[static_cast<size_t>(d)];
      rest /= out.dims[static_cast<size_t>(d)];
    }
    // The tile's buffers in its half: accumulator, box, [box in f32, weights], [result].
    uint64_t next = static_cast<uint64_t>((t % 2) * half);
    auto take = [&](int64_t bytes) {
      const uint64_t at = next;
      next += static_cast<uint64_t>(AlignedLocal(bytes));
      return at;
    };
    const uint64_t acc = take(elements * acc_b);
    const uint64_t temp = take(elements * b);
    const uint64_t temp_acc = fold.weights && convert ? take(elements * acc_b) : temp;
    const uint64_t weight_tile = fold.weights ? take(elements * acc_b) : 0;
    const uint64_t weight_row = fold.weights ? take(channels * b) : 0;
    const uint64_t weight_row_acc = fold.weights && convert ? take(channels * acc_b) : weight_row;
    const uint64_t out_tile = fold.out_dtype != fold.acc_dtype ? take(elements * out_b) : acc;
    std::vector<int64_t> tile_dims = out.dims;
    for (size_t d = 0; d < t_dim; ++d) tile_dims[d] = 1;
    tile_dims[t_dim] = count;
    const std::vector<int64_t> tile_strides = hlo::RowMajorStrides(tile_dims);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kVector);  // tile t-2 stored its half
    EmitFill(builder, acc, elements, fold.acc_dtype, fold.init_bits);
    for (int64_t k = 0; k < taps; ++k) {
      // This tap's box: per dimension the outputs whose input lies inside the operand.
      CopyBox box;
      box.operand = 0;
      bool whole = true, empty = false;
      for (int64_t d = static_cast<int64_t>(rank) - 1, rest = k; d >= 0; --d) {
        const hlo::WindowDim& w = fold.window[static_cast<size_t>(d)];
        const int64_t offset = rest % w.size - w.pad_lo;
        rest /= w.size;
        const int64_t n = in.dims[static_cast<size_t>(d)];
        int64_t lo = std::max<int64_t>(0, FloorDiv(-offset + w.stride - 1, w.stride));
        int64_t hi = std::min(out.dims[static_cast<size_t>(d)],
                              FloorDiv(n - 1 - offset, w.stride) + 1);
        const int64_t tile_lo = tile_start[static_cast<size_t>(d)];
        const int64_t tile_hi = tile_lo + tile_dims[static_cast<size_t>(d)];
        lo = std::max(lo, tile_lo);
        hi = std::min(hi, tile_hi);
        if (hi <= lo) empty = true;
        whole = whole && lo == tile_lo && hi == tile_hi;
        const int64_t stride = in_strides[static_cast<size_t>(d)];
        box.extents.insert(box.extents.begin(), std::max<int64_t>(hi - lo, 0));
        box.src_strides.insert(box.src_strides.begin(), w.stride * stride * b);
        box.dst_strides.insert(box.dst_strides.begin(), tile_strides[static_cast<size_t>(d)] * b);
        box.src_offset += (lo * w.stride + offset) * stride * b;
        box.dst_offset += (lo - tile_lo) * tile_strides[static_cast<size_t>(d)] * b;
      }
      if (empty) continue;  // every input of this tap is padding
      if (!whole) EmitFill(builder, temp, elements, fold.in_dtype, fold.pad_bits);
      builder.Signal(Unit::kVector, Unit::kLoad);  // the buffers are free (and filled)
      builder.Wait(Unit::kVector, Unit::kLoad);
      EmitBoxLoad(builder, box, b, operand, temp);
      if (fold.weights) {
        const int64_t row = channels * b;
        builder.Load(*fold.weights + static_cast<uint64_t>(k * row), row, weight_row, row, row,
                     1);
      }
      builder.Signal(Unit::kLoad, Unit::kVector);
      builder.Wait(Unit::kLoad, Unit::kVector);
      if (!fold.weights) {
        EmitBinary(builder, fold.combine, acc, acc, temp, elements, fold.acc_dtype);
        continue;
      }
      if (convert) {
        EmitConvert(builder, temp_acc, temp, elements, fold.in_dtype, fold.acc_dtype);
        EmitConvert(builder, weight_row_acc, weight_row, channels, fold.in_dtype,
                    fold.acc_dtype);
      }
      EmitBroadcastRows(builder, weight_tile, weight_row_acc, elements / channels, channels,
                        fold.acc_dtype);
      EmitBinary(builder, Opcode::kVMul, temp_acc, temp_acc, weight_tile, elements,
                 fold.acc_dtype);
      EmitBinary(builder, Opcode::kVAdd, acc, acc, temp_acc, elements, fold.acc_dtype);
    }
    if (out_tile != acc) {
      EmitConvert(builder, out_tile, acc, elements, fold.acc_dtype, fold.out_dtype);
    }
    builder.Signal(Unit::kVector, Unit::kStore);
    builder.Wait(Unit::kVector, Unit::kStore);
    const int64_t first = (o * out.dims[t_dim] + a) * slice;  // row-major: outer, then t_dim
    builder.Store(out_tile, elements * out_b, result + static_cast<uint64_t>(first * out_b),
                  elements * out_b, elements * out_b, 1);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kVector);
  }
  return true;
}


}  // namespace


bool EmitReduceWindow(ProgramBuilder& builder, const Instruction& rw, const ArchConfig& config,
                      uint64_t operand, uint64_t result, std::string* why) {
  auto fail = [&](const std::string& reason) {
    *why = reason;
    return false;
  };
  // The combiner, the init value and the window: as the target description states them.
  if (std::optional<std::string> reason = IntrinsicHostReason(rw)) return fail(*reason);
  if (!rw.shape().IsArray()) return fail("a variadic reduce-window");
  const hlo::Shape& in = rw.operand(0)->shape();
  const hlo::Shape& out = rw.shape();
  if (!in.HasDefaultLayout() || !out.HasDefaultLayout()) {
    return fail("a reduce-window with a non-default layout");
  }
  const VectorReducer reducer = *VectorReducerOf(rw);
  std::optional<Dtype> dtype = IsaDtype(out.type);
  if (!dtype || *dtype == Dtype::kPred) return fail("a reduce-window of other than numbers");
  WindowFold fold;
  fold.in = in;
  fold.out = out;
  fold.window = rw.attr<hlo::WindowAttrs>().window.dims;
  if (fold.window.size() != in.dims.size() || out.ElementCount() == 0) {
    return fail("an empty reduce-window");
  }
  fold.in_dtype = fold.acc_dtype = fold.out_dtype = *dtype;
  std::memcpy(&fold.init_bits, rw.operand(1)->attr<hlo::ConstantAttrs>().literal.bytes().data(),
              static_cast<size_t>(DtypeBytes(*dtype)));
  fold.pad_bits = fold.init_bits;
  fold.combine = reducer == VectorReducer::kSum ? Opcode::kVAdd : Opcode::kVMax;
  return EmitWindowFold(builder, fold, config, operand, result, why);
}

bool IsDepthwiseConv(const Instruction& conv, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  const auto& attrs = conv.attr<hlo::ConvolutionAttrs>();
  const auto& d = attrs.dnums;
  const hlo::Shape& in = conv.operand(0)->shape();
  const hlo::Shape& kernel = conv.operand(1)->shape();
  const bool nhwc = in.rank() == 4 && d.input_batch == 0 &&
                    d.input_spatial == std::vector<int64_t>{1, 2} && d.input_feature == 3 &&
                    d.kernel_spatial == std::vector<int64_t>{0, 1} &&
                    d.kernel_input_feature == 2 && d.kernel_output_feature == 3 &&
                    d.output_batch == 0 && d.output_spatial == std::vector<int64_t>{1, 2} &&
                    d.output_feature == 3;
  if (!nhwc) return fail("a grouped convolution not in b01f_01io->b01f form");
  if (attrs.batch_group_count != 1 || attrs.feature_group_count != in.dims[3] ||
      kernel.dims[2] != 1 || kernel.dims[3] != in.dims[3]) {
    return fail("a grouped convolution other than depthwise (one channel per group)");
  }
  if (!IsPlainWindow(attrs.window.dims)) return fail("a dilated or reversed depthwise convolution");
  if (!in.HasDefaultLayout() || !kernel.HasDefaultLayout() || !conv.shape().HasDefaultLayout()) {
    return fail("a depthwise convolution with non-default layouts");
  }
  const hlo::PrimitiveType type = in.type, out = conv.shape().type;
  const bool floating = type == hlo::PrimitiveType::kF32 || type == hlo::PrimitiveType::kBF16 ||
                        type == hlo::PrimitiveType::kF16;
  if (!floating || kernel.type != type || (out != type && out != hlo::PrimitiveType::kF32)) {
    return fail("a depthwise convolution of other than float types");
  }
  return true;
}

bool EmitDepthwiseConv(ProgramBuilder& builder, const Instruction& conv, const ArchConfig& config,
                       uint64_t input, uint64_t kernel, uint64_t result, std::string* why) {
  if (!IsDepthwiseConv(conv, why)) return false;
  const auto& window = conv.attr<hlo::ConvolutionAttrs>().window.dims;
  WindowFold fold;
  fold.in = conv.operand(0)->shape();
  fold.out = conv.shape();
  hlo::WindowDim unit;  // batch and channels: one tap, stride 1, no padding
  fold.window = {unit, window[0], window[1], unit};
  fold.in_dtype = *IsaDtype(fold.in.type);
  fold.acc_dtype = Dtype::kF32;  // the interpreter sums a float convolution in f32
  fold.out_dtype = *IsaDtype(fold.out.type);
  fold.combine = Opcode::kVAdd;
  fold.weights = kernel;
  return EmitWindowFold(builder, fold, config, input, result, why);
}

}  // namespace systolic::lowering
