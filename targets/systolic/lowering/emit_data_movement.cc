// Transposes by strided DMA (emit_data_movement.h).
#include "targets/systolic/lowering/emit_data_movement.h"

#include <algorithm>

#include "targets/systolic/lowering/emit_vector.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kMaxField = kMaxDmaRowBytes;  // 16-bit rows and row_bytes

bool ReshapeLike(const Instruction* inst) {
  Opcode op = inst->opcode();
  bool layout_free = op != Opcode::kBitcast || (inst->shape().HasDefaultLayout() &&
                                                inst->operand(0)->shape().HasDefaultLayout());
  return (op == Opcode::kReshape || op == Opcode::kBitcast || op == Opcode::kCopy) &&
         layout_free && inst->shape().type == inst->operand(0)->shape().type;
}

// One output dimension of the transpose: its extent and its stride in the source (elements).
struct Axis {
  int64_t extent, stride;
};

// The transpose of a batch of [rows x cols] matrices whose output rows are columns of the
// source (`axes` ends with the source's contiguous axis, then a strided one): DMA loads of row
// blocks, vtrans on the vector unit, DMA stores of the transposed blocks, double-buffered.
bool EmitVectorTranspose(ProgramBuilder& builder, const std::vector<Axis>& axes, int64_t b,
                         const ArchConfig& config, uint64_t source, uint64_t result,
                         std::string* why) {
  if (axes.size() < 2 || axes[axes.size() - 2].stride != 1) {
    if (why) *why = "a transpose that is not a batch of matrix transposes";
    return false;
  }
  const Axis cols = axes[axes.size() - 2];  // contiguous in the source: the tile's columns
  const Axis rows = axes.back();            // the output's rows: the tile's rows
  const std::vector<Axis> outer(axes.begin(), axes.end() - 2);
  const int64_t half = AlignedHalf(config.ub_bytes);
  const int64_t field = kMaxField / b;  // elements of one DMA row, and a vtrans side
  // Square-ish tiles: each side long enough for whole bursts, two tiles (source and
  // transposed) in half the buffer.
  int64_t side = 1;
  while ((side + 1) * (side + 1) * 2 * b <= half) ++side;
  const int64_t tc = std::min({cols.extent, field, std::max(side, half / (2 * b * rows.extent))});
  const int64_t tr = std::min({rows.extent, field, half / (2 * b * tc)});
  if (tr <= 0 || tc <= 0) {
    if (why) *why = "a transpose tile does not fit half the UB";
    return false;
  }
  const int64_t tile_bytes = AlignedLocal(tr * tc * b);
  const int64_t row_chunks = (rows.extent + tr - 1) / tr;
  const int64_t col_chunks = (cols.extent + tc - 1) / tc;
  int64_t tiles = row_chunks * col_chunks;
  for (const Axis& axis : outer) tiles *= axis.extent;
  const std::optional<Dtype> dtype = RawDtype(b);
  if (!dtype) {
    if (why) *why = "a transpose of " + std::to_string(b) + "-byte elements on the vector unit";
    return false;
  }
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t index = t / (row_chunks * col_chunks);
    int64_t source_offset = 0, result_offset = index * rows.extent * cols.extent;
    for (size_t k = outer.size(); k-- > 0;) {
      source_offset += index % outer[k].extent * outer[k].stride;
      index /= outer[k].extent;
    }
    const int64_t chunk = t % (row_chunks * col_chunks);
    const int64_t r0 = chunk / col_chunks * tr, c0 = chunk % col_chunks * tc;
    const int64_t nr = std::min(tr, rows.extent - r0), nc = std::min(tc, cols.extent - c0);
    source_offset += r0 * rows.stride + c0;
    result_offset += c0 * rows.extent + r0;
    const auto base = static_cast<uint64_t>((t % 2) * half);
    const uint64_t transposed = base + static_cast<uint64_t>(tile_bytes);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kLoad);
    builder.Load(source + static_cast<uint64_t>(source_offset * b), rows.stride * b, base, nc * b,
                 nc * b, nr);
    builder.Signal(Unit::kLoad, Unit::kVector);
    builder.Wait(Unit::kLoad, Unit::kVector);
    systolic::Instruction vtrans = MakeInstruction(systolic::Opcode::kVTrans);
    vtrans.set(VTransField::dst, transposed);
    vtrans.set(VTransField::src, base);
    vtrans.set(VTransField::rows, static_cast<uint64_t>(nr));
    vtrans.set(VTransField::cols, static_cast<uint64_t>(nc));
    vtrans.set(VTransField::dtype, static_cast<uint64_t>(*dtype));
    builder.Append(vtrans);
    builder.Signal(Unit::kVector, Unit::kStore);
    builder.Wait(Unit::kVector, Unit::kStore);
    builder.Store(transposed, nr * b, result + static_cast<uint64_t>(result_offset * b),
                  rows.extent * b, nr * b, nc);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

}  // namespace

std::optional<TransposePlan> AnalyzeTranspose(const hlo::Instruction& root,
                                              const ExternalIndex& external, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<TransposePlan> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const Instruction* inst = &root;
  while (!external(inst) && ReshapeLike(inst)) inst = inst->operand(0);
  if (external(inst) || inst->opcode() != Opcode::kTranspose) return fail("not a transpose");
  const Instruction* transpose = inst;
  inst = inst->operand(0);
  while (!external(inst) && ReshapeLike(inst)) inst = inst->operand(0);
  std::optional<int64_t> operand = external(inst);
  if (!operand) return fail("transpose of a computed value");
  if (!transpose->shape().IsArray() || transpose->shape().ElementCount() <= 0) {
    return fail("empty transpose");
  }
  TransposePlan plan;
  plan.dims = transpose->operand(0)->shape().dims;
  plan.permutation = transpose->attr<hlo::DimensionsAttrs>().dimensions;
  plan.element_bytes = hlo::ByteSize(transpose->shape().type);
  plan.operand = *operand;
  return plan;
}

bool EmitTranspose(ProgramBuilder& builder, const TransposePlan& plan, const ArchConfig& config,
                   uint64_t source, uint64_t result, std::string* why) {
  const int64_t b = plan.element_bytes;
  std::vector<int64_t> in_strides = hlo::RowMajorStrides(plan.dims);
  // Output axes in order, without unit extents, merged where the source is contiguous too.
  std::vector<Axis> axes;
  for (int64_t d : plan.permutation) {
    Axis axis{plan.dims[static_cast<size_t>(d)], in_strides[static_cast<size_t>(d)]};
    if (axis.extent == 1) continue;
    if (!axes.empty() && axes.back().stride == axis.stride * axis.extent) {
      axes.back() = {axes.back().extent * axis.extent, axis.stride};
    } else {
      axes.push_back(axis);
    }
  }
  if (axes.empty()) axes.push_back({1, 1});
  // A contiguous innermost run longer than the DMA's row field (a transpose that only moves
  // unit dimensions is one such run: a copy) is cut into rows of the largest divisor that fits.
  if (axes.back().stride == 1 && axes.back().extent * b > kMaxField) {
    const int64_t extent = axes.back().extent;
    int64_t width = kMaxField / b;
    while (extent % width != 0) --width;
    axes.back() = {extent / width, width};
    axes.push_back({width, 1});
  }
  // The DMA block: a row (contiguous elements, or one element), rows, planes.
  const bool contiguous_rows = axes.back().stride == 1;
  int64_t row_elements = contiguous_rows ? axes.back().extent : 1;
  std::vector<Axis> strided(axes.begin(), axes.end() - (contiguous_rows ? 1 : 0));
  Axis rows = strided.empty() ? Axis{1, row_elements} : strided.back();
  if (!strided.empty()) strided.pop_back();
  Axis planes = strided.empty() ? Axis{1, rows.extent * rows.stride} : strided.back();
  if (!strided.empty()) strided.pop_back();
  const int64_t row_bytes = row_elements * b;
  const int64_t half = config.ub_bytes / 2;
  if (contiguous_rows && rows.extent * row_bytes > half && row_bytes <= half) {
    // A plane of long contiguous rows does not fit: each row becomes a plane of its own (the
    // planes an outer axis), so tiles take as many rows as fit.
    if (planes.extent > 1) strided.push_back(planes);
    planes = rows;
    rows = Axis{1, row_elements};
  }
  const std::vector<Axis>& outer = strided;  // one DMA block per index, in output order
  const int64_t plane_bytes = rows.extent * row_bytes;
  if (row_bytes > kMaxField || rows.extent > kMaxField || plane_bytes > half) {
    // Output rows gathered element by element would pay a DRAM burst per element: the
    // vector unit transposes tiles instead.
    if (!contiguous_rows) return EmitVectorTranspose(builder, axes, b, config, source, result, why);
    if (why) *why = "transpose rows do not fit one DMA block";
    return false;
  }
  const int64_t planes_per_tile = std::min(planes.extent, half / plane_bytes);
  const int64_t plane_chunks = (planes.extent + planes_per_tile - 1) / planes_per_tile;
  int64_t blocks = plane_chunks;
  for (const Axis& axis : outer) blocks *= axis.extent;

  // Tiles of one plane chunk each, alternating between the two halves of the buffer.
  uint64_t out = result;
  for (int64_t t = 0; t < blocks; ++t) {
    int64_t index = t / plane_chunks;
    int64_t source_offset = 0;
    for (size_t k = outer.size(); k-- > 0;) {
      source_offset += index % outer[k].extent * outer[k].stride;
      index /= outer[k].extent;
    }
    const int64_t p0 = t % plane_chunks * planes_per_tile;
    const int64_t count = std::min(planes_per_tile, planes.extent - p0);
    source_offset += p0 * planes.stride;
    const uint64_t local = static_cast<uint64_t>((t % 2) * half);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kLoad);
    builder.LoadPlanes(source + static_cast<uint64_t>(source_offset * b), rows.stride * b,
                       planes.stride * b, local, row_bytes, plane_bytes, row_bytes, rows.extent,
                       count);
    builder.Signal(Unit::kLoad, Unit::kStore);
    builder.Wait(Unit::kLoad, Unit::kStore);
    const int64_t bytes = count * plane_bytes;
    builder.Store(local, bytes, out, bytes, bytes, 1);
    out += static_cast<uint64_t>(bytes);
    if (t + 2 < blocks) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

}  // namespace systolic::lowering
