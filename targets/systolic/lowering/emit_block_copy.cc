// PlanBlockCopies and EmitBlockCopies (emit_block_copy.h).
#include "targets/systolic/lowering/emit_block_copy.h"

#include <algorithm>
#include <cstring>

#include "hlo/literal.h"
#include "targets/systolic/lowering/emit_dynamic_index.h"
#include "targets/systolic/lowering/native_ops.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kMaxField = kMaxDmaRowBytes;  // 16-bit rows and row_bytes of a DMA

std::vector<int64_t> ByteStrides(const hlo::Shape& shape, int64_t element_bytes) {
  std::vector<int64_t> strides = hlo::RowMajorStrides(shape.dims);
  for (int64_t& stride : strides) stride *= element_bytes;
  return strides;
}

BlockCopyPlan PlanSlice(const Instruction& slice, int64_t b) {
  const auto& dims = slice.attr<hlo::SliceAttrs>().dims;
  const std::vector<int64_t> in = ByteStrides(slice.operand(0)->shape(), b);
  CopyBox box;
  box.operand = 0;
  box.extents = slice.shape().dims;
  box.dst_strides = ByteStrides(slice.shape(), b);
  for (size_t d = 0; d < dims.size(); ++d) {
    box.src_strides.push_back(in[d] * dims[d].stride);
    box.src_offset += in[d] * dims[d].start;
  }
  return {{box}, b, {}};
}

BlockCopyPlan PlanConcatenate(const Instruction& concat, int64_t b) {
  const size_t dim = static_cast<size_t>(concat.attr<hlo::DimensionsAttrs>().dimensions.at(0));
  const std::vector<int64_t> out = ByteStrides(concat.shape(), b);
  BlockCopyPlan plan{{}, b, {}};
  int64_t offset = 0;
  for (int64_t i = 0; i < concat.operand_count(); ++i) {
    const hlo::Shape& shape = concat.operand(i)->shape();
    CopyBox box;
    box.operand = i;
    box.extents = shape.dims;
    box.src_strides = ByteStrides(shape, b);
    box.dst_strides = out;
    box.dst_offset = offset * out[dim];
    offset += shape.dims[dim];
    plan.boxes.push_back(std::move(box));
  }
  return plan;
}

// A constant padding value and non-negative edge padding (IntrinsicHostReason checked them).
BlockCopyPlan PlanPad(const Instruction& pad, int64_t b) {
  const Instruction* value = pad.operand(1);
  const auto& dims = pad.attr<hlo::PadAttrs>().dims;
  const std::vector<int64_t> out = ByteStrides(pad.shape(), b);
  CopyBox fill;
  fill.extents = pad.shape().dims;
  fill.dst_strides = out;
  std::memcpy(&fill.fill_bits, value->attr<hlo::ConstantAttrs>().literal.bytes().data(),
              static_cast<size_t>(b));
  CopyBox copy;
  copy.operand = 0;
  copy.extents = pad.operand(0)->shape().dims;
  copy.src_strides = ByteStrides(pad.operand(0)->shape(), b);
  for (size_t d = 0; d < dims.size(); ++d) {
    copy.dst_strides.push_back(out[d] * (dims[d].interior + 1));
    copy.dst_offset += out[d] * dims[d].lo;
  }
  return BlockCopyPlan{{fill, copy}, b, {}};
}

// The start indices of a dynamic-slice / dynamic-update-slice (operands first_start...): the
// constant ones clamped here into the box's offset (`offset`, bytes), the others (s32 or u32:
// IntrinsicHostReason checked them) as terms.
void PlanStarts(const Instruction& inst, int64_t first_start, const std::vector<int64_t>& sizes,
                int64_t b, int64_t* offset, std::vector<DynamicStart>* dynamic) {
  const hlo::Shape& shape = inst.operand(0)->shape();
  const std::vector<int64_t> strides = hlo::RowMajorStrides(shape.dims);
  for (size_t d = 0; d < shape.dims.size(); ++d) {
    const Instruction* start = inst.operand(first_start + static_cast<int64_t>(d));
    const int64_t max = shape.dims[d] - sizes[d];
    if (start->opcode() == Opcode::kConstant) {
      const hlo::Literal& literal = start->attr<hlo::ConstantAttrs>().literal;
      int64_t clamped;
      if (start->shape().type == hlo::PrimitiveType::kU64) {  // above 2^63 is large, not < 0
        clamped = static_cast<int64_t>(
            std::min(literal.data<uint64_t>()[0], static_cast<uint64_t>(max)));
      } else {
        clamped = std::clamp<int64_t>(literal.GetAsInt64(0), 0, max);
      }
      *offset += clamped * strides[d] * b;
    } else if (max > 0) {
      dynamic->push_back({first_start + static_cast<int64_t>(d), max, strides[d],
                          start->shape().type == hlo::PrimitiveType::kU32});
    }
  }
}

BlockCopyPlan PlanDynamicSlice(const Instruction& ds, int64_t b) {
  CopyBox box;
  box.operand = 0;
  box.extents = ds.shape().dims;
  box.src_strides = ByteStrides(ds.operand(0)->shape(), b);
  box.dst_strides = ByteStrides(ds.shape(), b);
  BlockCopyPlan plan{{}, b, {}};
  PlanStarts(ds, 1, ds.shape().dims, b, &box.src_offset, &plan.dynamic);
  box.dynamic_src = !plan.dynamic.empty();
  plan.boxes.push_back(std::move(box));
  return plan;
}

// The operand copied whole, then the update stored over it.
BlockCopyPlan PlanDynamicUpdateSlice(const Instruction& dus, int64_t b) {
  const hlo::Shape& update = dus.operand(1)->shape();
  CopyBox whole;
  whole.operand = 0;
  whole.extents = dus.shape().dims;
  whole.src_strides = whole.dst_strides = ByteStrides(dus.shape(), b);
  CopyBox box;
  box.operand = 1;
  box.extents = update.dims;
  box.src_strides = ByteStrides(update, b);
  box.dst_strides = ByteStrides(dus.shape(), b);
  BlockCopyPlan plan{{}, b, {}};
  PlanStarts(dus, 2, update.dims, b, &box.dst_offset, &plan.dynamic);
  box.dynamic_dst = !plan.dynamic.empty();
  plan.boxes.push_back(std::move(whole));
  plan.boxes.push_back(std::move(box));
  return plan;
}

// A reverse as one box per index of the reversed dimensions (each box a positive-stride copy
// of the rest; IntrinsicHostReason keeps them to kMaxReverseBoxes, native_ops.h).
BlockCopyPlan PlanReverse(const Instruction& reverse, int64_t b) {
  const hlo::Shape& shape = reverse.shape();
  std::vector<bool> reversed(shape.dims.size(), false);
  int64_t boxes = 1;
  for (int64_t d : reverse.attr<hlo::DimensionsAttrs>().dimensions) {
    if (reversed[static_cast<size_t>(d)] || shape.dims[static_cast<size_t>(d)] == 1) continue;
    reversed[static_cast<size_t>(d)] = true;
    boxes *= shape.dims[static_cast<size_t>(d)];
  }
  const std::vector<int64_t> strides = ByteStrides(shape, b);
  BlockCopyPlan plan{{}, b, {}};
  for (int64_t i = 0; i < boxes; ++i) {
    CopyBox box;
    box.operand = 0;
    box.src_strides = box.dst_strides = strides;
    for (int64_t d = static_cast<int64_t>(shape.dims.size()) - 1, rest = i; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      if (!reversed[u]) {
        box.extents.insert(box.extents.begin(), shape.dims[u]);
        continue;
      }
      const int64_t index = rest % shape.dims[u];
      rest /= shape.dims[u];
      box.extents.insert(box.extents.begin(), 1);
      box.dst_offset += index * strides[u];
      box.src_offset += (shape.dims[u] - 1 - index) * strides[u];
    }
    plan.boxes.push_back(std::move(box));
  }
  return plan;
}

// One dimension of a box after normalization.
struct Axis {
  int64_t extent, src, dst;  // steps, byte strides
};

// The box's dimensions without unit extents, merged where both sides are contiguous across
// them, the innermost split so that a contiguous row is at most 64 KiB - 1.
std::vector<Axis> Normalize(const CopyBox& box, int64_t b) {
  std::vector<Axis> axes;
  const bool fill = box.operand < 0;
  for (size_t d = 0; d < box.extents.size(); ++d) {
    Axis axis{box.extents[d], fill ? 0 : box.src_strides[d], box.dst_strides[d]};
    if (axis.extent == 1) continue;
    if (!axes.empty() && axes.back().src == axis.src * axis.extent &&
        axes.back().dst == axis.dst * axis.extent) {
      axes.back() = {axes.back().extent * axis.extent, axis.src, axis.dst};
    } else {
      axes.push_back(axis);
    }
  }
  if (axes.empty()) axes.push_back({1, fill ? 0 : b, b});
  Axis& inner = axes.back();
  if ((fill || inner.src == b) && inner.dst == b && inner.extent * b > kMaxField) {
    // Rows of `width` elements, `width` the largest divisor of the extent that fits the field.
    int64_t width = kMaxField / b;
    while (inner.extent % width != 0) --width;
    const Axis outer{inner.extent / width, inner.src * width, inner.dst * width};
    inner.extent = width;
    axes.insert(axes.end() - 1, outer);
  }
  return axes;
}

// A normalized box as DMA blocks: a row (contiguous elements, or one element), rows, planes,
// and the dimensions beyond them (one block per index).
struct DmaBlock {
  int64_t row_elements;
  Axis rows, planes;
  std::vector<Axis> outer;
};

DmaBlock BlockOf(std::vector<Axis> axes, bool fill, int64_t b) {
  const bool contiguous = (fill || axes.back().src == b) && axes.back().dst == b;
  const int64_t row_elements = contiguous ? axes.back().extent : 1;
  if (contiguous) axes.pop_back();
  const Axis rows = axes.empty() ? Axis{1, row_elements * b, row_elements * b} : axes.back();
  if (!axes.empty()) axes.pop_back();
  const Axis planes = axes.empty() ? Axis{1, rows.extent * rows.src, rows.extent * rows.dst}
                                   : axes.back();
  if (!axes.empty()) axes.pop_back();
  return {row_elements, rows, planes, std::move(axes)};
}

}  // namespace

std::optional<BlockCopyPlan> PlanBlockCopies(const hlo::Instruction& inst, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<BlockCopyPlan> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const hlo::Shape& shape = inst.shape();
  if (!shape.IsArray() || !shape.HasDefaultLayout()) return fail("a result without default layout");
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray() || !operand->shape().HasDefaultLayout()) {
      return fail("an operand without default layout");
    }
  }
  if (std::optional<std::string> reason = DmaElementTypeReason(shape.type)) return fail(*reason);
  // Forms the plan does not take, as the target description states them (native_ops.h).
  if (std::optional<std::string> reason = IntrinsicHostReason(inst)) return fail(*reason);
  const int64_t b = hlo::ByteSize(shape.type);
  if (shape.ElementCount() == 0) return fail("an empty result");
  switch (inst.opcode()) {
    case Opcode::kSlice: return PlanSlice(inst, b);
    case Opcode::kConcatenate: return PlanConcatenate(inst, b);
    case Opcode::kPad: return PlanPad(inst, b);
    case Opcode::kDynamicSlice: return PlanDynamicSlice(inst, b);
    case Opcode::kDynamicUpdateSlice: return PlanDynamicUpdateSlice(inst, b);
    case Opcode::kReverse: return PlanReverse(inst, b);
    default:
      return fail("not a slice, concatenate, pad, reverse or dynamic slice");
  }
}

bool EmitBlockCopies(ProgramBuilder& builder, const BlockCopyPlan& plan, const ArchConfig& config,
                     const std::vector<uint64_t>& operands, uint64_t result, std::string* why) {
  const int64_t b = plan.element_bytes;
  // The dynamic start's program sits above the two tile halves.
  int64_t usable = config.ub_bytes;
  uint64_t start_address = 0;
  if (!plan.dynamic.empty()) {
    std::vector<IndexTerm> terms;
    for (const DynamicStart& start : plan.dynamic) {
      terms.push_back({operands[static_cast<size_t>(start.operand)], 4, start.max, start.stride,
                       start.is_unsigned});
    }
    if (!IndexTermsFit(terms, 0, why)) return false;
    usable = (config.ub_bytes - IndexProgramBytes(terms.size(), 1)) / (2 * kLocalAlignment) *
             (2 * kLocalAlignment);
    if (usable <= 0) {
      if (why) *why = "the UB holds no tile beside the start index program";
      return false;
    }
    start_address = EmitIndexProgram(builder, terms, 0, 1, static_cast<uint64_t>(usable)).result;
  }
  const int64_t half = usable / 2;
  std::vector<const CopyBox*> boxes;  // those with elements
  for (const CopyBox& box : plan.boxes) {
    int64_t elements = 1;
    for (int64_t extent : box.extents) elements *= extent;
    if (elements > 0) boxes.push_back(&box);
  }
  for (const CopyBox* box : boxes) {  // each paired with the box's wait below
    if (box->dynamic_src) builder.Signal(Unit::kVector, Unit::kLoad);
    if (box->dynamic_dst) builder.Signal(Unit::kVector, Unit::kStore);
  }
  for (size_t i = 0; i < boxes.size(); ++i) {
    const CopyBox& box = *boxes[i];
    std::vector<Axis> axes = Normalize(box, b);
    const bool fill = box.operand < 0;
    if (fill && i > 0) {  // the vfill would overwrite what earlier stores still read
      if (why) *why = "internal: a fill after a copy";
      return false;
    }
    const DmaBlock block = BlockOf(std::move(axes), fill, b);
    const int64_t row_elements = block.row_elements;
    const Axis& rows = block.rows;
    const Axis& planes = block.planes;
    const std::vector<Axis>& outer = block.outer;  // one block per index

    const int64_t row_bytes = row_elements * b;
    if (row_bytes > half) {
      if (why) *why = "a DMA row of " + std::to_string(row_bytes) + " bytes exceeds half the UB";
      return false;
    }
    // Tiles: a chunk of rows of one plane, or a chunk of whole planes.
    const int64_t rows_per_tile = std::min({rows.extent, half / row_bytes, kMaxField});
    const bool whole_planes = rows_per_tile == rows.extent;
    const int64_t plane_bytes = rows.extent * row_bytes;
    const int64_t planes_per_tile = whole_planes ? std::min(planes.extent, half / plane_bytes) : 1;
    const int64_t row_chunks = (rows.extent + rows_per_tile - 1) / rows_per_tile;
    const int64_t plane_chunks = (planes.extent + planes_per_tile - 1) / planes_per_tile;
    int64_t tiles = row_chunks * plane_chunks;
    for (const Axis& axis : outer) tiles *= axis.extent;

    if (i > 0) builder.Wait(Unit::kStore, Unit::kLoad);  // the previous box stored all
    if (box.dynamic_src) {
      builder.Wait(Unit::kVector, Unit::kLoad);
      builder.LoadRegister(ConfigRegister::kLoadDramOffset, start_address);
      builder.SetRegister(ConfigRegister::kLoadOffsetScale, b);
    }
    if (box.dynamic_dst) {
      builder.Wait(Unit::kVector, Unit::kStore);
      builder.LoadRegister(ConfigRegister::kStoreDramOffset, start_address);
      builder.SetRegister(ConfigRegister::kStoreOffsetScale, b);
    }
    if (fill) {
      // One tile's worth of the value, stored again for every tile.
      const int64_t count = rows_per_tile * planes_per_tile * row_elements;
      // An 8-byte value is two 4-byte words.
      const Dtype dtype = *RawDtype(b == 8 ? 4 : b);
      const int64_t words = b == 8 ? 2 : 1;
      const uint32_t low = static_cast<uint32_t>(box.fill_bits);
      if (b == 8 && static_cast<uint32_t>(box.fill_bits >> 32) != low) {
        if (why) *why = "an 8-byte padding value whose halves differ";
        return false;
      }
      // As in EmitIota: the vfill waits for the segment's op order on the load unit.
      builder.Signal(Unit::kLoad, Unit::kVector);
      builder.Wait(Unit::kLoad, Unit::kVector);
      EmitFill(builder, 0, count * words, dtype, low);
      builder.Signal(Unit::kVector, Unit::kStore);
      builder.Wait(Unit::kVector, Unit::kStore);
    }
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t index = t / (row_chunks * plane_chunks);
      int64_t src = box.src_offset, dst = box.dst_offset;
      for (size_t k = outer.size(); k-- > 0;) {
        src += index % outer[k].extent * outer[k].src;
        dst += index % outer[k].extent * outer[k].dst;
        index /= outer[k].extent;
      }
      const int64_t chunk = t % (row_chunks * plane_chunks);
      const int64_t p0 = chunk / row_chunks * planes_per_tile;
      const int64_t r0 = chunk % row_chunks * rows_per_tile;
      const int64_t plane_count = std::min(planes_per_tile, planes.extent - p0);
      const int64_t row_count = std::min(rows_per_tile, rows.extent - r0);
      src += p0 * planes.src + r0 * rows.src;
      dst += p0 * planes.dst + r0 * rows.dst;
      const int64_t tile_plane = row_count * row_bytes;
      uint64_t local = 0;
      if (!fill) {
        local = static_cast<uint64_t>((t % 2) * half);
        if (t >= 2) builder.Wait(Unit::kStore, Unit::kLoad);
        builder.LoadPlanes(operands[static_cast<size_t>(box.operand)] + static_cast<uint64_t>(src),
                           rows.src, planes.src, local, row_bytes, tile_plane, row_bytes,
                           row_count, plane_count);
        builder.Signal(Unit::kLoad, Unit::kStore);
        builder.Wait(Unit::kLoad, Unit::kStore);
      }
      builder.StorePlanes(local, row_bytes, tile_plane, result + static_cast<uint64_t>(dst),
                          rows.dst, planes.dst, row_bytes, row_count, plane_count);
      if (!fill && t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kLoad);
    }
    if (box.dynamic_src) builder.SetRegister(ConfigRegister::kLoadDramOffset, 0);
    if (box.dynamic_dst) builder.SetRegister(ConfigRegister::kStoreDramOffset, 0);
    if (i + 1 < boxes.size()) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

void EmitBoxLoad(ProgramBuilder& builder, const CopyBox& box, int64_t b, uint64_t source,
                 uint64_t local) {
  const DmaBlock block = BlockOf(Normalize(box, b), /*fill=*/false, b);
  const int64_t row_elements = block.row_elements;
  const Axis& rows = block.rows;
  const Axis& planes = block.planes;
  const std::vector<Axis>& axes = block.outer;
  int64_t blocks = 1;
  for (const Axis& axis : axes) blocks *= axis.extent;
  for (int64_t i = 0; i < blocks; ++i) {
    int64_t index = i, src = box.src_offset, dst = box.dst_offset;
    for (size_t k = axes.size(); k-- > 0;) {
      src += index % axes[k].extent * axes[k].src;
      dst += index % axes[k].extent * axes[k].dst;
      index /= axes[k].extent;
    }
    for (int64_t r0 = 0; r0 < rows.extent; r0 += kMaxField) {
      builder.LoadPlanes(source + static_cast<uint64_t>(src + r0 * rows.src), rows.src,
                         planes.src, local + static_cast<uint64_t>(dst + r0 * rows.dst),
                         rows.dst, planes.dst, row_elements * b,
                         std::min(kMaxField, rows.extent - r0), planes.extent);
    }
  }
}

bool EmitIota(ProgramBuilder& builder, const hlo::Instruction& iota, const ArchConfig& config,
              uint64_t result, std::string* why) {
  const hlo::Shape& shape = iota.shape();
  std::optional<Dtype> dtype = IsaDtype(shape.type);
  if (!dtype || *dtype == Dtype::kPred || !shape.HasDefaultLayout()) {
    *why = "an iota of " + std::string(hlo::PrimitiveTypeName(shape.type)) +
           " or with a non-default layout";
    return false;
  }
  const int64_t elements = shape.ElementCount();
  if (elements <= 0 || elements > (int64_t{1} << 32)) {
    *why = "an iota of " + std::to_string(elements) + " elements";
    return false;
  }
  const size_t dim = static_cast<size_t>(iota.attr<hlo::IotaAttrs>().dimension);
  int64_t inner = 1;
  for (size_t d = dim + 1; d < shape.dims.size(); ++d) inner *= shape.dims[d];
  // The vector unit writes first: it waits until the load unit passed the segment's op-order
  // wait (segment_builder.h), so the previous op on this half has stored what it held there.
  builder.Signal(Unit::kLoad, Unit::kVector);
  builder.Wait(Unit::kLoad, Unit::kVector);
  const int64_t b = DtypeBytes(*dtype);
  const int64_t half = config.ub_bytes / 2;
  // The viota count field holds 20 bits.
  const int64_t per_tile = std::min(half / b, (int64_t{1} << 20) - 1);
  if (per_tile <= 0) {
    *why = "half the UB holds no element";
    return false;
  }
  const int64_t tiles = (elements + per_tile - 1) / per_tile;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t start = t * per_tile;
    const int64_t count = std::min(per_tile, elements - start);
    const uint64_t local = static_cast<uint64_t>((t % 2) * half);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kVector);
    EmitViota(builder, local, count, *dtype, start, inner, shape.dims[dim]);
    builder.Signal(Unit::kVector, Unit::kStore);
    builder.Wait(Unit::kVector, Unit::kStore);
    const int64_t bytes = count * b;
    builder.Store(local, bytes, result + static_cast<uint64_t>(start * b), bytes, bytes, 1);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kVector);
  }
  return true;
}

}  // namespace systolic::lowering
