// Dot and convolution on the CPU: thunks that call cpu::Sgemm / SgemmBatched / Conv2D (gemm.h).
//
// Covered (anything else is left to the caller, which falls back): canonical dots
// ([batch..., m, k] x [batch..., k, n], compiler/passes/dot_canonicalizer.h) and 2-D
// convolutions in the cpu target's preferred labels b01f_01io->b01f (NHWC x HWIO -> NHWC) with
// batch_group_count 1, no window reversal and non-negative padding; all with default layouts and
// element types f32, bf16 or f16. bf16/f16 operands are widened to f32 into scratch buffers
// owned by the thunk and the f32 result is rounded to nearest even into the output, as the
// interpreter does (accumulation in f32).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "targets/cpu/thunk.h"

namespace cpu {

// A generated per-block epilogue (kernel_emitter.h EmitTileKernel): called by the GEMM /
// convolution on each finished block of C, on the thread that computed it, while the block is
// in cache. `buffers` are the ids passed to the tile kernel; `function` is set after the JIT.
using TileFunction = void (*)(void** buffers, int64_t row, int64_t rows, int64_t col,
                              int64_t cols);
struct TileEpilogue {
  std::string symbol;
  std::vector<int64_t> buffers;
  TileFunction function = nullptr;
};

// nullptr when `contraction` (a dot or convolution) is outside the covered set above.
// lhs/rhs/output are buffer ids of the sequence that will run the thunk. With an epilogue
// (only for an f32 result without batch dimensions, viewed as rows x last dimension), it runs
// on every block of the result. `lhs_transposed` / `rhs_transposed` (dots only): that
// operand's buffer holds it with its last two dimensions swapped ([batch..., k, m] /
// [batch..., n, k] row-major) — the operand of a transpose the caller did not materialize —
// and the GEMM reads it as a transposed A / B.
std::unique_ptr<Thunk> MakeContractionThunk(const hlo::Instruction& contraction,
                                            const std::string& name, int64_t lhs, int64_t rhs,
                                            int64_t output,
                                            std::shared_ptr<TileEpilogue> epilogue = nullptr,
                                            bool lhs_transposed = false,
                                            bool rhs_transposed = false);
// Whether MakeContractionThunk returns a thunk for the dot `dot` (no epilogue).
bool GemmCoversDot(const hlo::Instruction& dot);
// Whether MakeContractionThunk accepts an epilogue for `contraction`.
bool SupportsTileEpilogue(const hlo::Instruction& contraction);

}  // namespace cpu
