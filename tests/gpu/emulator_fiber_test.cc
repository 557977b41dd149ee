// The host emulator's fibers (targets/gpu/emulator/fiber_block.h): every thread of a block runs
// to completion, barriers order their writes and reads, and a barrier some threads never reach
// is reported instead of hanging.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "targets/gpu/emulator/fiber_block.h"

namespace {

using gpu::emulator::FiberBarrier;
using gpu::emulator::RunFiberBlock;

TEST(GpuEmulatorFibers, BarriersSeparateWritesFromReads) {
  // Each of 64 threads writes its slot, waits, reads its right neighbour's, waits, overwrites:
  // without the barriers a thread would read a slot before (or after) it was written.
  constexpr int kThreads = 64;
  std::vector<int> slots(kThreads, -1), seen(kThreads, -1), after(kThreads, -1);
  FiberBarrier barrier(kThreads);
  int current = -1;
  RunFiberBlock(
      kThreads, [&](int t) { current = t; },
      [&](int t) {
        EXPECT_EQ(current, t);
        slots[t] = 10 * t;
        barrier.ArriveAndWait();
        seen[t] = slots[(t + 1) % kThreads];
        barrier.ArriveAndWait();
        slots[t] = -t;
        barrier.ArriveAndWait();
        after[t] = slots[(t + 1) % kThreads];
      });
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(seen[t], 10 * ((t + 1) % kThreads)) << t;
    EXPECT_EQ(after[t], -((t + 1) % kThreads)) << t;
  }
}

TEST(GpuEmulatorFibers, BarrierNotReachedByEveryThreadIsADeadlockError) {
  FiberBarrier barrier(4);
  try {
    RunFiberBlock(
        4, [](int) {},
        [&](int t) {
          if (t != 2) barrier.ArriveAndWait();  // thread 2 returns without arriving
        });
    FAIL() << "expected a deadlock error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), testing::HasSubstr("deadlocked"));
  }
  // The scheduler is usable again afterwards.
  int ran = 0;
  RunFiberBlock(3, [](int) {}, [&](int) { ++ran; });
  EXPECT_EQ(ran, 3);
}

}  // namespace
