// Tiling plans for the matrix unit: how a (batched) M x K x N matmul is cut into tiles that fit
// the array (k <= array.rows, n <= array.cols), two unified-buffer sets (double buffering: the
// load unit fills one set while the matrix and vector units work on the other) and two
// accumulator sets.
//
// Guarantees: a returned plan satisfies tk <= R, tn <= C, 2 * set_bytes <= ub.bytes,
// 2 * acc_set_bytes <= acc.bytes, tm <= 65535, and for the os / is dataflows tm <= R / tm <= C
// (their size limits); nullopt (with the reason) when even one output row does not fit — the
// caller runs the op on the host instead.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"

namespace systolic::lowering {

// A dot in canonical form: lhs [batch, M, K], rhs [batch, K, N], result [batch, M, N] (batch
// and M/N may be absent), all with default layouts.

struct MatmulShape {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  Dtype input = Dtype::kF32;
};
std::optional<MatmulShape> CanonicalMatmul(const hlo::Instruction& dot, const ArchConfig& config,
                                           std::string* why);

struct MatmulPlan {
  int64_t tm = 0, tk = 0, tn = 0, k_blocks = 0;
  // One set: the A panel (tm whole rows of K), the W panel (k blocks of tk x tn) and the
  // epilogue's buffers.
  int64_t a_bytes = 0, w_bytes = 0, epilogue_bytes = 0;
  int64_t set_bytes = 0, acc_set_bytes = 0;
};

// `epilogue_bytes(tm, tn)` is the UB footprint of the epilogue for one tile (nullopt: too big).
using EpilogueFootprint = std::function<std::optional<int64_t>(int64_t tm, int64_t tn)>;

std::optional<MatmulPlan> PlanMatmul(const MatmulShape& shape, const ArchConfig& config,
                                     const EpilogueFootprint& epilogue_bytes, std::string* why);

}  // namespace systolic::lowering
