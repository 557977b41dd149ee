// EmitReduceWindow (emit_reduce_window.h).
#include "targets/systolic/lowering/emit_reduce_window.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "hlo/literal.h"
#include "targets/systolic/lowering/emit_block_copy.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/row_op_table.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;

int64_t AlignUp(int64_t bytes) {
  return (bytes + kLocalAlignment - 1) / kLocalAlignment * kLocalAlignment;
}

// Floor division for a possibly negative numerator and a positive divisor.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

bool EmitReduceWindow(ProgramBuilder& builder, const Instruction& rw, const ArchConfig& config,
                      uint64_t operand, uint64_t result, std::string* why) {
  auto fail = [&](const std::string& reason) {
    *why = reason;
    return false;
  };
  if (rw.operand_count() != 2 || !rw.shape().IsArray()) return fail("a variadic reduce-window");
  const hlo::Shape& in = rw.operand(0)->shape();
  const hlo::Shape& out = rw.shape();
  if (!in.HasDefaultLayout() || !out.HasDefaultLayout()) {
    return fail("a reduce-window with a non-default layout");
  }
  std::optional<VectorReducer> reducer = VectorReducerOf(rw);
  std::optional<Dtype> dtype = IsaDtype(out.type);
  if (!reducer || (*reducer != VectorReducer::kSum && *reducer != VectorReducer::kMax) ||
      !dtype || *dtype == Dtype::kPred) {
    return fail("a reduce-window other than a max from -inf or a sum from 0 of numbers");
  }
  const std::vector<hlo::WindowDim>& window = rw.attr<hlo::WindowAttrs>().window.dims;
  const size_t rank = in.dims.size();
  for (const hlo::WindowDim& d : window) {
    if (d.base_dilation != 1 || d.window_dilation != 1 || d.reversal || d.stride <= 0) {
      return fail("a dilated or reversed reduce-window");
    }
  }
  if (window.size() != rank || out.ElementCount() == 0) return fail("an empty reduce-window");
  const int64_t b = DtypeBytes(*dtype);
  const std::vector<int64_t> in_strides = hlo::RowMajorStrides(in.dims);
  // Tiles: ranges of the first dimension longer than one (every dimension before it has one
  // index, so a tile is a contiguous run of the result).
  size_t t_dim = 0;
  while (t_dim + 1 < rank && out.dims[t_dim] == 1) ++t_dim;
  int64_t slice = 1;  // elements per index of the tiled dimension
  for (size_t d = t_dim + 1; d < rank; ++d) slice *= out.dims[d];
  const int64_t half = config.ub_bytes / 2 / kLocalAlignment * kLocalAlignment;
  const int64_t per_tile =
      std::min(out.dims[t_dim], half / 2 / kLocalAlignment * kLocalAlignment / (slice * b));
  if (per_tile <= 0 || slice > (int64_t{1} << 20)) {
    return fail("one slice of the reduce-window's result exceeds a quarter of the UB");
  }
  const uint32_t init_bits = [&] {
    uint32_t bits = 0;
    std::memcpy(&bits, rw.operand(1)->attr<hlo::ConstantAttrs>().literal.bytes().data(),
                static_cast<size_t>(b));
    return bits;
  }();
  const Opcode combine = *reducer == VectorReducer::kSum ? Opcode::kVAdd : Opcode::kVMax;
  int64_t offsets = 1;
  for (const hlo::WindowDim& d : window) offsets *= d.size;
  const int64_t tiles = (out.dims[t_dim] + per_tile - 1) / per_tile;
  // The vector unit writes first: after the load unit passed the segment's op-order wait.
  builder.Signal(Unit::kLoad, Unit::kVector);
  builder.Wait(Unit::kLoad, Unit::kVector);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t a = t * per_tile, count = std::min(per_tile, out.dims[t_dim] - a);
    const int64_t elements = count * slice;
    const auto acc = static_cast<uint64_t>((t % 2) * half);
    const uint64_t temp = acc + static_cast<uint64_t>(AlignUp(elements * b));
    std::vector<int64_t> tile_dims = out.dims;
    tile_dims[t_dim] = count;
    const std::vector<int64_t> tile_strides = hlo::RowMajorStrides(tile_dims);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kVector);  // tile t-2 stored its half
    EmitFill(builder, acc, elements, *dtype, init_bits);
    for (int64_t k = 0; k < offsets; ++k) {
      // This offset's box: per dimension the outputs whose input lies inside the operand.
      CopyBox box;
      box.operand = 0;
      bool whole = true, empty = false;
      for (int64_t d = static_cast<int64_t>(rank) - 1, rest = k; d >= 0; --d) {
        const hlo::WindowDim& w = window[static_cast<size_t>(d)];
        const int64_t offset = rest % w.size - w.pad_lo;
        rest /= w.size;
        const int64_t n = in.dims[static_cast<size_t>(d)];
        int64_t lo = std::max<int64_t>(0, FloorDiv(-offset + w.stride - 1, w.stride));
        int64_t hi = std::min(out.dims[static_cast<size_t>(d)],
                              FloorDiv(n - 1 - offset, w.stride) + 1);
        const int64_t tile_lo = static_cast<size_t>(d) == t_dim ? a : 0;
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
      if (empty) continue;  // every input of this offset is padding
      if (!whole) EmitFill(builder, temp, elements, *dtype, init_bits);
      builder.Signal(Unit::kVector, Unit::kLoad);  // temp is free (and filled)
      builder.Wait(Unit::kVector, Unit::kLoad);
      EmitBoxLoad(builder, box, b, operand, temp);
      builder.Signal(Unit::kLoad, Unit::kVector);
      builder.Wait(Unit::kLoad, Unit::kVector);
      EmitBinary(builder, combine, acc, acc, temp, elements, *dtype);
    }
    builder.Signal(Unit::kVector, Unit::kStore);
    builder.Wait(Unit::kVector, Unit::kStore);
    builder.Store(acc, elements * b, result + static_cast<uint64_t>(a * slice * b), elements * b,
                  elements * b, 1);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kVector);
  }
  return true;
}

}  // namespace systolic::lowering
