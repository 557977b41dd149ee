// A reusable test harness for LLVM code generated from HLO: builds `void f(void** buffers)` that
// evaluates a computation with the elemental emitter (one scalar loop per output, over physical
// positions), JIT-compiles it with ORC LLJIT for the host, runs it on Literals and returns the
// result as a Literal. Used by tests/llvm/ and available to the cpu and gpu backend tests.
//
// Guarantees: buffers are laid out in each shape's physical layout (minor_to_major), converted
// from and to the Literals' row-major order here; buffers[0..P) are the parameters,
// buffers[P..] the flattened outputs; the module is verified (a broken module is an hlo::Error
// carrying the verifier's message) and optimized with LLVM's O2 pipeline unless disabled. One
// LLJIT serves the whole process (calls are serialized); compiled code is kept until exit.
// Setting RETARGET_JIT_DUMP_DIR=DIR writes each module's unoptimized IR to DIR/fN.ll.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace llvm_test {

struct JitOptions {
  bool optimize = true;                     // run the O2 pipeline before JIT-compiling
  std::string* ir_out = nullptr;            // when set, receives the (unoptimized) LLVM IR text
  std::string* optimized_ir_out = nullptr;  // when set, the IR after the O2 pipeline
  double* run_seconds = nullptr;  // when set, the wall time of the call into the compiled code
};

// Runs `computation` (array root, or a tuple root of arrays) on `arguments` (one per parameter,
// row-major literals of the parameter shapes). Throws hlo::Error on emitter or JIT failure.
hlo::Literal RunComputation(const hlo::Computation& computation,
                            std::span<const hlo::Literal> arguments,
                            const JitOptions& options = {});

// Same for a module's entry computation.
hlo::Literal RunEntry(const hlo::Module& module, std::span<const hlo::Literal> arguments,
                      const JitOptions& options = {});

// Moves row-major literal data into the physical order of `shape`'s layout, and back.
std::vector<uint8_t> ToPhysical(const hlo::Literal& literal, const hlo::Shape& shape);
hlo::Literal FromPhysical(std::span<const uint8_t> bytes, const hlo::Shape& shape);

// Distance in units in the last place between two floats of `type` (0 when bit-equal, or both
// NaN; a large value when only one is NaN).
int64_t UlpDistance(hlo::PrimitiveType type, double a, double b);

}  // namespace llvm_test
