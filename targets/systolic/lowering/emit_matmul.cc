// Matrix-unit emission of dots and output fusions (emit_matmul.h).
#include "targets/systolic/lowering/emit_matmul.h"

#include <algorithm>

#include "targets/systolic/lowering/contraction_pipeline.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/mxu_steps.h"
#include "targets/systolic/lowering/tiling.h"

namespace systolic::lowering {
namespace {

Instruction LoadWeights(uint64_t src, int64_t k, int64_t n, Dtype dtype, int buf) {
  Instruction inst = MakeInstruction(Opcode::kMxuLoadWeights);
  inst.set(MxuLoadWeightsField::src, src);
  inst.set(MxuLoadWeightsField::k, static_cast<uint64_t>(k));
  inst.set(MxuLoadWeightsField::n, static_cast<uint64_t>(n));
  inst.set(MxuLoadWeightsField::dtype, static_cast<uint64_t>(dtype));
  inst.set(MxuLoadWeightsField::buf, static_cast<uint64_t>(buf));
  return inst;
}

Instruction Matmul(uint64_t src, uint64_t dst, int64_t m, Dtype dtype, int buf, bool accumulate,
                   Dataflow dataflow) {
  Instruction inst = MakeInstruction(Opcode::kMxuMatmul);
  inst.set(MxuMatmulField::src, src);
  inst.set(MxuMatmulField::dst, dst);
  inst.set(MxuMatmulField::m, static_cast<uint64_t>(m));
  inst.set(MxuMatmulField::dtype, static_cast<uint64_t>(dtype));
  inst.set(MxuMatmulField::buf, static_cast<uint64_t>(buf));
  inst.set(MxuMatmulField::acc, accumulate ? 1 : 0);
  inst.set(MxuMatmulField::dataflow, static_cast<uint64_t>(dataflow));
  return inst;
}

}  // namespace

bool EmitMatmulFusion(ProgramBuilder& builder, const RowProgram& program,
                      const ArchConfig& config, const std::vector<uint64_t>& params, int64_t lhs,
                      int64_t rhs, uint64_t result, std::string* why,
                      const LocalOperands& local) {
  std::optional<MatmulShape> shape = CanonicalMatmul(*program.contraction, config, why);
  if (!shape) return false;
  return EmitMatmulTiles(builder, program, *shape, config, params, lhs, rhs, result, why, local);
}

bool EmitMatmulTiles(ProgramBuilder& builder, const RowProgram& program,
                     const MatmulShape& matmul, const ArchConfig& config,
                     const std::vector<uint64_t>& params, int64_t lhs, int64_t rhs,
                     uint64_t result, std::string* why, const LocalOperands& local) {
  const MatmulShape* shape = &matmul;
  if (program.has_reduce) {
    if (why) *why = "reduction in a dot epilogue";
    return false;
  }
  if (program.values[static_cast<size_t>(program.root)].cls != RowClass::kFull) {
    if (why) *why = "output fusion root is not the dot's shape";
    return false;
  }
  std::optional<TileBuffers> epilogue_buffers;
  auto epilogue = [&](int64_t tm, int64_t tn) -> std::optional<int64_t> {
    epilogue_buffers = PlanTileBuffers(program, tm, tn, config.ub_bytes);
    if (!epilogue_buffers) return std::nullopt;
    return epilogue_buffers->footprint;
  };
  std::optional<MatmulPlan> plan = PlanMatmul(*shape, config, epilogue, why);
  if (!plan) return false;
  epilogue(plan->tm, plan->tn);  // the buffers of the chosen tile size

  // The copy of the result into the UB runs on the vector unit.
  const bool vector_stage =
      program.has_vector_work() || local.result.has_value() || local.result_rows.has_value();
  const int64_t b = DtypeBytes(shape->input);
  const int64_t m_tiles = (shape->m + plan->tm - 1) / plan->tm;
  const int64_t n_tiles = (shape->n + plan->tn - 1) / plan->tn;
  const int64_t tiles = shape->batch * m_tiles * n_tiles;
  const uint64_t lhs_base = params[static_cast<size_t>(lhs)];
  const uint64_t rhs_base = params[static_cast<size_t>(rhs)];
  ContractionPipeline pipeline(builder, vector_stage, tiles);
  // Where tile t lives. UB: [A panel 0][A panel 1][W + epilogue set 0][W + epilogue set 1]
  // (2 * set_bytes). An A panel (tm rows of K) serves every column tile of its rows: it is
  // loaded with the first one (n innermost) and stays until panel + 2 reuses its slot, which
  // the set-reuse token of tile t - 2 already orders (that tile is the panel's last or later).
  struct Placement {
    int64_t batch, m0, n0, rows, cols, panel;
    uint64_t a_local, w_local, epilogue_local, acc;
    Tile tile;
  };
  const int64_t row_bytes = shape->k * b;
  auto place = [&](int64_t t) {
    Placement p;
    p.batch = t / (m_tiles * n_tiles);
    p.m0 = (t / n_tiles) % m_tiles * plan->tm;
    p.n0 = t % n_tiles * plan->tn;
    p.rows = std::min(plan->tm, shape->m - p.m0);
    p.cols = std::min(plan->tn, shape->n - p.n0);
    p.panel = t / n_tiles;
    p.a_local = static_cast<uint64_t>((p.panel % 2) * plan->a_bytes);
    p.w_local = static_cast<uint64_t>(2 * plan->a_bytes +
                                      (t % 2) * (plan->set_bytes - plan->a_bytes));
    p.epilogue_local = p.w_local + static_cast<uint64_t>(plan->w_bytes);
    p.acc = kAccumulatorBit + static_cast<uint64_t>((t % 2) * plan->acc_set_bytes);
    p.tile = Tile{p.batch * shape->m + p.m0, p.rows, p.n0, p.cols};
    return p;
  };

  // Load unit: the W panel (K x cols, one strided load; packed, its k blocks follow each
  // other), the A panel (whole rows, one contiguous block; the matmuls pick k columns with a
  // row stride), then the epilogue's operands. Weights first: when A is the previous op's
  // result, the load unit waits for that op only at A's load (lowering.cc), so the weight
  // panel streams while the previous op drains.
  auto emit_loads = [&](int64_t t) {
    const Placement p = place(t);
    pipeline.BeginLoads(t);
    // With at most two column tiles (n innermost), set t%2 still holds this W panel from tile
    // t - 2 when that tile had the same batch: W is loaded once per set, not once per row block.
    const bool panel_resident =
        t >= 2 && n_tiles <= 2 && (t - 2) / (m_tiles * n_tiles) == p.batch;
    if (!panel_resident) {
      builder.Load(rhs_base + static_cast<uint64_t>((p.batch * shape->k * shape->n + p.n0) * b),
                   shape->n * b, p.w_local, p.cols * b, p.cols * b, shape->k);
    }
    if (t % n_tiles == 0 && !local.lhs) {  // the first column tile of its rows
      builder.Load(lhs_base + static_cast<uint64_t>((p.batch * shape->m + p.m0) * row_bytes),
                   row_bytes, p.a_local, row_bytes, row_bytes, p.rows);
    }
    EmitTileLoads(builder, program, *epilogue_buffers, p.epilogue_local, p.tile, params);
    pipeline.EndLoads();
  };

  // Matrix unit, then the epilogue on the accumulator tile (vector unit), then the store.
  int weight_buffer = 0;
  auto emit_compute = [&](int64_t t) {
    const Placement p = place(t);
    pipeline.BeginMxu(t);
    std::vector<MxuStep> steps;
    for (int64_t kb = 0; kb < plan->k_blocks; ++kb) {
      const int64_t depth = std::min(plan->tk, shape->k - kb * plan->tk);
      MxuStep step;
      step.ldw = LoadWeights(p.w_local + static_cast<uint64_t>(kb * plan->tk * p.cols * b),
                             depth, p.cols, shape->input, weight_buffer);
      if (local.lhs) {  // k block kb of the on-chip lhs: packed rows of `depth` elements
        step.matmuls.push_back(Matmul(
            *local.lhs + static_cast<uint64_t>((kb * plan->tk * shape->batch * shape->m +
                                                (p.batch * shape->m + p.m0) * depth) * b),
            p.acc, p.rows, shape->input, weight_buffer, kb > 0, config.dataflow));
      } else {  // A rows are K elements apart in the panel
        step.matmul_src_row_stride = plan->k_blocks > 1 ? row_bytes : 0;
        step.matmuls.push_back(Matmul(p.a_local + static_cast<uint64_t>(kb * plan->tk * b),
                                      p.acc, p.rows, shape->input, weight_buffer, kb > 0,
                                      config.dataflow));
      }
      steps.push_back(std::move(step));
      weight_buffer ^= 1;
    }
    EmitMxuSteps(builder, steps);
    pipeline.EndMxu();

    if (vector_stage) {
      pipeline.BeginVector();
      EmitTileCompute(builder, program, *epilogue_buffers, p.epilogue_local, p.tile, p.acc);
      if (local.result) {  // column block n0 / tn, rows from batch * M + m0
        const int64_t bytes = DtypeBytes(program.values[static_cast<size_t>(program.root)].dtype);
        EmitTileCopyToLocal(builder, program, *epilogue_buffers, p.epilogue_local, p.tile, p.acc,
                            *local.result + static_cast<uint64_t>(
                                (p.n0 * shape->batch * shape->m + p.tile.row0 * p.cols) * bytes));
      }
      if (local.result_rows) {  // row r of the tile at (row0 + r, n0) of the row-major copy
        const int64_t bytes = DtypeBytes(program.values[static_cast<size_t>(program.root)].dtype);
        EmitTileCopyPiecesToLocal(
            builder, program, *epilogue_buffers, p.epilogue_local, p.tile, p.acc, p.cols,
            *local.result_rows + static_cast<uint64_t>((p.tile.row0 * shape->n + p.n0) * bytes),
            shape->n * bytes);
      }
      pipeline.EndVector(t);
    }
    pipeline.BeginStore();
    EmitTileStore(builder, program, *epilogue_buffers, p.epilogue_local, p.tile, result, p.acc);
    pipeline.EndStore(t);
  };

  // Tile t's loads come before tile t - 1's compute in program order, so the in-order front
  // end queues the next tile's loads while the matrix unit works (emit_conv.cc does the same).
  for (int64_t t = 0; t <= tiles; ++t) {
    if (t < tiles) emit_loads(t);
    if (t >= 1) emit_compute(t - 1);
  }
  return true;
}

}  // namespace systolic::lowering
