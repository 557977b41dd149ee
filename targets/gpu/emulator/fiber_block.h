// The threads of one emulated thread block as fibers (ucontext) on the calling OS thread: the
// host emulator's replacement for one OS thread per emulated GPU thread.
//
// RunFiberBlock(n, on_resume, body) runs body(t) for t = 0 .. n-1, each on its own stack,
// switching only where a fiber waits at a FiberBarrier (a warp shuffle, bar.sync): round-robin,
// on_resume(t) called before every switch into fiber t (so per-thread state such as the
// emulated thread id can live in one global). Deterministic: the same kernel and grid always
// interleave the same way.
//
// Guarantees: returns when every body has returned; throws std::runtime_error when a full round
// makes no progress (some fibers wait at a barrier the others finished without reaching — a
// kernel bug a real GPU would hang on). Not reentrant: one block at a time per process.
#pragma once

#include <cstdint>
#include <functional>

namespace gpu::emulator {

// A barrier for `size` fibers of the running block (reusable: generations).
struct FiberBarrier {
  explicit FiberBarrier(int size) : size(size) {}
  void ArriveAndWait();  // only from inside RunFiberBlock's fibers
  int size;
  int arrived = 0;
  uint64_t generation = 0;
};

void RunFiberBlock(int threads, const std::function<void(int)>& on_resume,
                   const std::function<void(int)>& body);

}  // namespace gpu::emulator
