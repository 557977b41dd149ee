// Matrix-unit emission of dots and output fusions (emit_matmul.h).
#include "targets/systolic/lowering/emit_matmul.h"

#include <algorithm>

#include "targets/systolic/lowering/contraction_pipeline.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/tiling.h"

namespace systolic::lowering {
namespace {

void LoadWeights(ProgramBuilder& builder, uint64_t src, int64_t k, int64_t n, Dtype dtype,
                 int buf) {
  Instruction inst = MakeInstruction(Opcode::kMxuLoadWeights);
  inst.set(MxuLoadWeightsField::src, src);
  inst.set(MxuLoadWeightsField::k, static_cast<uint64_t>(k));
  inst.set(MxuLoadWeightsField::n, static_cast<uint64_t>(n));
  inst.set(MxuLoadWeightsField::dtype, static_cast<uint64_t>(dtype));
  inst.set(MxuLoadWeightsField::buf, static_cast<uint64_t>(buf));
  builder.Append(inst);
}

void Matmul(ProgramBuilder& builder, uint64_t src, uint64_t dst, int64_t m, Dtype dtype, int buf,
            bool accumulate, Dataflow dataflow) {
  Instruction inst = MakeInstruction(Opcode::kMxuMatmul);
  inst.set(MxuMatmulField::src, src);
  inst.set(MxuMatmulField::dst, dst);
  inst.set(MxuMatmulField::m, static_cast<uint64_t>(m));
  inst.set(MxuMatmulField::dtype, static_cast<uint64_t>(dtype));
  inst.set(MxuMatmulField::buf, static_cast<uint64_t>(buf));
  inst.set(MxuMatmulField::acc, accumulate ? 1 : 0);
  inst.set(MxuMatmulField::dataflow, static_cast<uint64_t>(dataflow));
  builder.Append(inst);
}

}  // namespace

bool EmitMatmulFusion(ProgramBuilder& builder, const RowProgram& program,
                      const ArchConfig& config, const std::vector<uint64_t>& params, int64_t lhs,
                      int64_t rhs, uint64_t result, std::string* why) {
  std::optional<MatmulShape> shape = CanonicalMatmul(*program.contraction, config, why);
  if (!shape) return false;
  return EmitMatmulTiles(builder, program, *shape, config, params, lhs, rhs, result, why);
}

bool EmitMatmulTiles(ProgramBuilder& builder, const RowProgram& program,
                     const MatmulShape& matmul, const ArchConfig& config,
                     const std::vector<uint64_t>& params, int64_t lhs, int64_t rhs,
                     uint64_t result, std::string* why) {
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

  const bool vector_stage = program.has_vector_work();
  const int64_t b = DtypeBytes(shape->input);
  const int64_t m_tiles = (shape->m + plan->tm - 1) / plan->tm;
  const int64_t n_tiles = (shape->n + plan->tn - 1) / plan->tn;
  const int64_t tiles = shape->batch * m_tiles * n_tiles;
  const uint64_t lhs_base = params[static_cast<size_t>(lhs)];
  const uint64_t rhs_base = params[static_cast<size_t>(rhs)];
  ContractionPipeline pipeline(builder, vector_stage, tiles);
  int weight_buffer = 0;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t batch = t / (m_tiles * n_tiles);
    const int64_t m0 = (t / n_tiles) % m_tiles * plan->tm;
    const int64_t n0 = t % n_tiles * plan->tn;
    const int64_t rows = std::min(plan->tm, shape->m - m0);
    const int64_t cols = std::min(plan->tn, shape->n - n0);
    const uint64_t set = static_cast<uint64_t>((t % 2) * plan->set_bytes);
    const uint64_t a_local = set, w_local = set + static_cast<uint64_t>(plan->a_bytes);
    const uint64_t epilogue_local = w_local + static_cast<uint64_t>(plan->w_bytes);
    const uint64_t acc = kAccumulatorBit + static_cast<uint64_t>((t % 2) * plan->acc_set_bytes);
    Tile tile{batch * shape->m + m0, rows, n0, cols};

    // Load unit: A and W blocks of every k block, then the epilogue's operands.
    pipeline.BeginLoads(t);
    // A: whole rows (one contiguous block; the matmuls pick k columns with a row stride).
    const int64_t row_bytes = shape->k * b;
    builder.Load(lhs_base + static_cast<uint64_t>((batch * shape->m + m0) * row_bytes), row_bytes,
                 a_local, row_bytes, row_bytes, rows);
    // W: the K x cols panel in one strided load; packed, its k blocks follow each other.
    builder.Load(rhs_base + static_cast<uint64_t>((batch * shape->k * shape->n + n0) * b),
                 shape->n * b, w_local, cols * b, cols * b, shape->k);
    EmitTileLoads(builder, program, *epilogue_buffers, epilogue_local, tile, params);
    pipeline.EndLoads();

    // Matrix unit.
    pipeline.BeginMxu(t);
    for (int64_t kb = 0; kb < plan->k_blocks; ++kb) {
      const int64_t depth = std::min(plan->tk, shape->k - kb * plan->tk);
      // mxu.src_row_stride serves both: packed W blocks, A rows K elements apart.
      builder.SetRegister(ConfigRegister::kMxuSrcRowStride, 0);
      LoadWeights(builder, w_local + static_cast<uint64_t>(kb * plan->tk * cols * b), depth,
                  cols, shape->input, weight_buffer);
      builder.SetRegister(ConfigRegister::kMxuSrcRowStride, plan->k_blocks > 1 ? row_bytes : 0);
      Matmul(builder, a_local + static_cast<uint64_t>(kb * plan->tk * b), acc, rows,
             shape->input, weight_buffer, kb > 0, config.dataflow);
      weight_buffer ^= 1;
    }
    pipeline.EndMxu();

    // Vector unit: the epilogue on the accumulator tile.
    if (vector_stage) {
      pipeline.BeginVector();
      EmitTileCompute(builder, program, *epilogue_buffers, epilogue_local, tile, acc);
      pipeline.EndVector(t);
    }

    // Store unit.
    pipeline.BeginStore();
    EmitTileStore(builder, program, *epilogue_buffers, epilogue_local, tile, result, acc);
    pipeline.EndStore(t);
  }
  return true;
}

}  // namespace systolic::lowering
