// Transposes by strided DMA (emit_data_movement.h).
#include "targets/systolic/lowering/emit_data_movement.h"

#include <algorithm>

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kMaxField = 65535;  // 16-bit rows and row_bytes

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
  // The DMA block: a row (contiguous elements, or one element), rows, planes.
  const bool contiguous_rows = axes.back().stride == 1;
  int64_t row_elements = contiguous_rows ? axes.back().extent : 1;
  std::vector<Axis> strided(axes.begin(), axes.end() - (contiguous_rows ? 1 : 0));
  Axis rows = strided.empty() ? Axis{1, row_elements} : strided.back();
  if (!strided.empty()) strided.pop_back();
  Axis planes = strided.empty() ? Axis{1, rows.extent * rows.stride} : strided.back();
  if (!strided.empty()) strided.pop_back();
  const std::vector<Axis>& outer = strided;  // one DMA block per index, in output order

  const int64_t row_bytes = row_elements * b;
  const int64_t plane_bytes = rows.extent * row_bytes;
  const int64_t half = config.ub_bytes / 2;
  if (row_bytes > kMaxField || rows.extent > kMaxField || plane_bytes > half) {
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
