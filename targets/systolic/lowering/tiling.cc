// Matmul tiling (tiling.h).
#include "targets/systolic/lowering/tiling.h"

#include <algorithm>

#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/row_op_table.h"
#include "targets/systolic/lowering/scratchpad.h"

namespace systolic::lowering {
namespace {

bool Iota(const std::vector<int64_t>& dims, int64_t count) {
  if (static_cast<int64_t>(dims.size()) != count) return false;
  for (int64_t i = 0; i < count; ++i) {
    if (dims[static_cast<size_t>(i)] != i) return false;
  }
  return true;
}

}  // namespace

std::optional<MatmulShape> CanonicalMatmul(const hlo::Instruction& dot, const ArchConfig& config,
                                           std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<MatmulShape> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const hlo::Shape& lhs = dot.operand(0)->shape();
  const hlo::Shape& rhs = dot.operand(1)->shape();
  const auto& d = dot.attr<hlo::DotAttrs>().dnums;
  int64_t nb = static_cast<int64_t>(d.lhs_batch.size());
  if (!Iota(d.lhs_batch, nb) || !Iota(d.rhs_batch, nb) || d.lhs_contracting.size() != 1 ||
      d.rhs_contracting.size() != 1 || d.lhs_contracting[0] != lhs.rank() - 1 ||
      d.rhs_contracting[0] != nb || lhs.rank() > nb + 2 || rhs.rank() != nb + 2) {
    return fail("dot not in [batch, M, K] x [batch, K, N] form");
  }
  if (!lhs.HasDefaultLayout() || !rhs.HasDefaultLayout() || !dot.shape().HasDefaultLayout()) {
    return fail("dot with non-default layouts");
  }
  MatmulShape shape;
  for (int64_t i = 0; i < nb; ++i) shape.batch *= lhs.dims[static_cast<size_t>(i)];
  shape.k = lhs.dims.back();
  shape.m = lhs.rank() == nb + 2 ? lhs.dims[static_cast<size_t>(nb)] : 1;
  shape.n = rhs.rank() == nb + 2 ? rhs.dims.back() : 1;
  std::optional<Dtype> in = IsaDtype(lhs.type);
  if (!in || lhs.type != rhs.type || MxuBit(*in) == 0) {
    return fail("dot on " + std::string(hlo::PrimitiveTypeName(lhs.type)) +
                " (the matrix unit takes s8, bf16 or f32)");
  }
  if ((config.mxu_dtypes & MxuBit(*in)) == 0) {
    return fail("array.dtypes of this configuration lacks " + std::string(DtypeName(*in)));
  }
  hlo::PrimitiveType out = dot.shape().type;
  bool accumulates_exactly =
      *in == Dtype::kS8 ? out == hlo::PrimitiveType::kS32
                        : (out == hlo::PrimitiveType::kF32 || out == lhs.type);
  if (!accumulates_exactly) {
    return fail("dot result type " + std::string(hlo::PrimitiveTypeName(out)));
  }
  if (shape.m <= 0 || shape.k <= 0 || shape.n <= 0 || shape.batch <= 0) {
    return fail("empty dot");
  }
  shape.input = *in;
  return shape;
}

std::optional<MatmulPlan> PlanMatmul(const MatmulShape& shape, const ArchConfig& config,
                                     const EpilogueFootprint& epilogue_bytes, std::string* why) {
  MatmulPlan plan;
  const int64_t b = DtypeBytes(shape.input);
  plan.tk = std::min(shape.k, config.array_rows);
  plan.tn = std::min(shape.n, config.array_cols);
  plan.k_blocks = (shape.k + plan.tk - 1) / plan.tk;
  int64_t tm = std::min<int64_t>(shape.m, 65535);
  if (config.dataflow == Dataflow::kOs) tm = std::min(tm, config.array_rows);
  if (config.dataflow == Dataflow::kIs) tm = std::min(tm, config.array_cols);
  for (; tm > 0; tm /= 2) {
    std::optional<int64_t> epilogue = epilogue_bytes(tm, plan.tn);
    if (!epilogue) continue;
    plan.tm = tm;
    plan.a_bytes = AlignUp(tm * shape.k * b, kLocalAlignment);  // whole rows of A
    plan.w_bytes = AlignUp(plan.k_blocks * plan.tk * plan.tn * b, kLocalAlignment);
    plan.epilogue_bytes = AlignUp(*epilogue, kLocalAlignment);
    plan.set_bytes = plan.a_bytes + plan.w_bytes + plan.epilogue_bytes;
    plan.acc_set_bytes = AlignUp(tm * plan.tn * 4, kLocalAlignment);
    if (2 * plan.set_bytes <= config.ub_bytes && 2 * plan.acc_set_bytes <= config.acc_bytes) {
      return plan;
    }
  }
  if (why) {
    *why = "no tile of a " + std::to_string(shape.m) + "x" + std::to_string(shape.k) + "x" +
           std::to_string(shape.n) + " matmul fits ub.bytes / acc.bytes twice (double buffering)";
  }
  return std::nullopt;
}

}  // namespace systolic::lowering
