// The order of a tile's weight loads and matmuls on the matrix unit.
//
// A tile is a list of steps, each one `mxu.ldw` into weight buffer i % 2 followed by the
// matmuls that use it. Emitted naively (ldw 0, mm 0, ldw 1, mm 1, ...) every weight load waits
// for the matmul ahead of it to release its buffer and the next matmul then waits for the load:
// the array idles for about a weight load per step. EmitMxuSteps issues them as docs/isa.md
// ("Back to back (ws)") recommends:
//
//   ldw 0, ldw 1, mm 0, mm 1, ldw 2, mm 2, ldw 3, mm 3, ...
//
// so each weight load runs while the previous step's matmuls stream (TPU v1's weight FIFO).
//
// Guarantees: the same instructions, each with the mxu.src_row_stride it was given; a matmul
// always comes after its own step's ldw and before the ldw that reuses its buffer (step i + 2),
// so results are those of the naive order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "simulator/isa/isa.h"
#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

struct MxuStep {
  Instruction ldw;                    // mxu.ldw (read with mxu.src_row_stride 0: packed)
  std::vector<Instruction> matmuls;   // mxu.matmul on that buffer
  int64_t matmul_src_row_stride = 0;  // mxu.src_row_stride for the matmuls
};

// `after_step(i)`, when given, is called once step i's matmuls are emitted (other units'
// instructions placed there are dispatched while the array works).
inline void EmitMxuSteps(ProgramBuilder& builder, const std::vector<MxuStep>& steps,
                         const std::function<void(size_t)>& after_step = {}) {
  auto ldw = [&](size_t i) {
    if (i >= steps.size()) return;
    builder.SetRegister(ConfigRegister::kMxuSrcRowStride, 0);
    builder.Append(steps[i].ldw);
  };
  auto matmuls = [&](size_t i) {
    builder.SetRegister(ConfigRegister::kMxuSrcRowStride, steps[i].matmul_src_row_stride);
    for (const Instruction& mm : steps[i].matmuls) builder.Append(mm);
  };
  if (steps.empty()) return;
  ldw(0);
  ldw(1);
  matmuls(0);
  if (after_step) after_step(0);
  for (size_t i = 1; i < steps.size(); ++i) {
    matmuls(i);
    if (after_step) after_step(i);
    ldw(i + 1);
  }
}

}  // namespace systolic::lowering
