// Runtime functions that LLVM-generated host code may call and that this machine's C runtime
// may lack, for the JITs that run such code on the host (the CPU backend, the GPU host
// emulator): each JIT defines these symbols to them.
#pragma once

namespace llvm_codegen {

// __truncsfbf2: x86-64 without AVX512-BF16 converts f32 to bf16 by calling it (LLVM promotes
// bfloat arithmetic to f32 and back), and the libgcc of GCC 12 does not have it. Rounds as hlo/
// does (nearest even, NaNs stay quiet NaNs); the bf16 result travels in the low 16 bits of
// xmm0, as a _Float16 does. The address to register under that name.
void* TruncSfBf2Address();

}  // namespace llvm_codegen
