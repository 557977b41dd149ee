// Fibers for the emulated threads of a block (see fiber_block.h).
#include "targets/gpu/emulator/fiber_block.h"

#include <ucontext.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace gpu::emulator {
namespace {

// Enough for the JIT-compiled kernels (small frames, no recursion) and the emulator's hooks.
constexpr size_t kFiberStackBytes = 256 * 1024;

struct Scheduler {
  ucontext_t main;
  std::vector<ucontext_t> contexts;
  std::vector<bool> finished;
  const std::function<void(int)>* body = nullptr;
  int running = -1;
  bool progress = false;  // something changed in this round (arrival, release, completion)
};
// Per OS thread: the devices of a multi-device emulation run blocks at once, one thread each.
thread_local Scheduler* active = nullptr;

// Stacks are reused across blocks and launches (allocating, let alone zeroing, 256 KiB per
// emulated thread per block would cost more than most kernels); one pool per OS thread.
std::vector<std::unique_ptr<char[]>>& StackPool() {
  thread_local std::vector<std::unique_ptr<char[]>> pool;
  return pool;
}

void FiberMain() {
  Scheduler& scheduler = *active;
  const int fiber = scheduler.running;
  (*scheduler.body)(fiber);
  scheduler.finished[static_cast<size_t>(fiber)] = true;
  scheduler.progress = true;
  // Returning resumes uc_link: the scheduler.
}

// getcontext returns twice (like setjmp): kept out of RunFiberBlock so that none of its locals
// live across it.
[[gnu::noinline]] void PrepareFiber(ucontext_t& context, char* stack, ucontext_t* scheduler) {
  getcontext(&context);
  context.uc_stack.ss_sp = stack;
  context.uc_stack.ss_size = kFiberStackBytes;
  context.uc_link = scheduler;
  makecontext(&context, &FiberMain, 0);
}

void YieldToScheduler() {
  Scheduler& scheduler = *active;
  swapcontext(&scheduler.contexts[static_cast<size_t>(scheduler.running)], &scheduler.main);
}

}  // namespace

void FiberBarrier::ArriveAndWait() {
  if (active == nullptr) throw std::logic_error("FiberBarrier used outside RunFiberBlock");
  active->progress = true;
  const uint64_t waiting_for = generation;
  if (++arrived == size) {
    arrived = 0;
    ++generation;
    return;
  }
  while (generation == waiting_for) YieldToScheduler();
}

void RunFiberBlock(int threads, const std::function<void(int)>& on_resume,
                   const std::function<void(int)>& body) {
  if (active != nullptr) throw std::logic_error("RunFiberBlock is not reentrant");
  Scheduler scheduler;
  scheduler.body = &body;
  scheduler.contexts.resize(static_cast<size_t>(threads));
  scheduler.finished.assign(static_cast<size_t>(threads), false);
  auto& pool = StackPool();
  while (pool.size() < static_cast<size_t>(threads))
    pool.push_back(std::unique_ptr<char[]>(new char[kFiberStackBytes]));
  for (size_t t = 0; t < scheduler.contexts.size(); ++t)
    PrepareFiber(scheduler.contexts[t], pool[t].get(), &scheduler.main);
  active = &scheduler;
  for (bool any_running = true; any_running;) {
    any_running = false;
    scheduler.progress = false;
    for (int t = 0; t < threads; ++t) {
      if (scheduler.finished[static_cast<size_t>(t)]) continue;
      any_running = true;
      scheduler.running = t;
      on_resume(t);
      swapcontext(&scheduler.main, &scheduler.contexts[static_cast<size_t>(t)]);
    }
    if (any_running && !scheduler.progress) {
      active = nullptr;
      throw std::runtime_error(
          "emulator: the block's threads deadlocked (a warp shuffle or bar.sync that not every "
          "thread reaches)");
    }
  }
  active = nullptr;
}

}  // namespace gpu::emulator
