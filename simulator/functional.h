// The data effect of each compute instruction of the ISA (matrix unit and vector unit): the
// reference semantics that the SystemC model executes and that the lowering's tests rely on.
// docs/isa.md states the same rules in prose.
//
// Guarantees:
//   - mxu.matmul / mxu.conv: int8 x int8 -> s32 exact (wrapping); bf16 x bf16 -> f32 with each
//     product exact in f32 and accumulation in f32 in increasing k order; f32 likewise. `acc`=0
//     overwrites, 1 adds to the existing accumulator value (which must have been written).
//   - Vector ops follow hlo/ir.h's rules for the matching HLO op (NaN-propagating max/min, IEEE
//     compares, round-to-nearest-even conversions, saturating float->int, NaN -> 0); bf16/f16
//     arithmetic in f32, rounded when stored.
//   - Every operand range is checked against its memory (LocalMemory throws hlo::Error); dtype
//     combinations the ISA forbids (e.g. mxu dtype s32) throw hlo::Error. The caller (the
//     simulator) prefixes the instruction index.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "simulator/memory.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator {

// Values of the configuration registers (cfg.set), indexed by systolic::ConfigRegister.
using RegisterFile = std::array<uint32_t, 32>;

// The matrix unit's two weight buffers (mxu.ldw writes one; matmul/conv read one).
struct WeightBuffers {
  struct Buffer {
    bool loaded = false;
    int64_t k = 0, n = 0;
    systolic::Dtype dtype = systolic::Dtype::kF32;
    std::vector<uint8_t> bytes;  // row-major k x n elements of dtype
  };
  std::array<Buffer, 2> buffers;
};

// Executes an mxu.* instruction's data effect.
void ExecuteMxu(const systolic::Instruction& inst, const systolic::ArchConfig& config,
                const RegisterFile& registers, WeightBuffers& weights, Memories& memories);
// cfg.set / cfg.load: writes the register (cfg.load: the 4-byte little-endian value at its local
// `src`, read now). Returns the local bytes read (0 for cfg.set).
int64_t ExecuteConfigWrite(const systolic::Instruction& inst, RegisterFile& registers,
                           Memories& memories);
// Executes a v* instruction's data effect.
void ExecuteVector(const systolic::Instruction& inst, const RegisterFile& registers,
                   Memories& memories);

}  // namespace simulator
