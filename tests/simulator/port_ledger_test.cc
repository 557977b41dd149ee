// PortLedger (simulator/port_ledger.h): requests share a port's bandwidth cycle by cycle, the
// earlier ones first. Hand-computed ends, then random requests checked against a per-cycle
// usage array kept by the test.
#include "simulator/port_ledger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using simulator::PortLedger;

TEST(PortLedger, AloneARequestMovesAtItsOwnPaceOrThePorts) {
  PortLedger port(64);
  EXPECT_EQ(port.Reserve(0, 1024, 16), 64);   // one 16 B row per cycle for 64 cycles
  EXPECT_EQ(port.Reserve(100, 256, 1000), 104);  // faster than the port: 4 cycles at 64
  EXPECT_EQ(port.Reserve(200, 0, 16), 200);   // nothing to move
  EXPECT_EQ(port.Reserve(300, 10, 4), 303);   // 4, 4, 2
}

TEST(PortLedger, LaterRequestsTakeWhatTheEarlierOnesLeave) {
  PortLedger port(64);
  EXPECT_EQ(port.Reserve(0, 480, 48), 10);   // [0, 10) at 48
  // 16 left for [0, 10): 160 bytes, then 64 per cycle: 100 more in 2 cycles (64, 36).
  EXPECT_EQ(port.Reserve(0, 260, 64), 12);
  // [0, 10) full, [10, 11) holds 64 and [11, 12) 36: 28 at cycle 11, then 64 per cycle.
  EXPECT_EQ(port.Reserve(5, 156, 64), 14);   // 28 + 64 + 64 = 156 by cycle 14
  port.Forget(12);
  EXPECT_EQ(port.Reserve(12, 64, 64), 15);   // [12, 14) full; 64 at cycle 14
  EXPECT_EQ(port.Reserve(20, 64, 64), 21);   // everything ended
}

TEST(PortLedger, RandomRequestsNeverExceedTheCapacityAndTakeAllTheyCan) {
  constexpr int64_t kCapacity = 64, kHorizon = 40000;
  std::mt19937 rng(7);
  PortLedger port(kCapacity);
  std::vector<int64_t> usage(kHorizon, 0);
  int64_t now = 0;
  for (int i = 0; i < 400; ++i) {
    now += static_cast<int64_t>(rng() % 6);
    const int64_t bytes = static_cast<int64_t>(rng() % 2048) + 1;
    const int64_t rate = static_cast<int64_t>(rng() % 80) + 1;
    if (i % 17 == 0) port.Forget(now);
    const int64_t end = port.Reserve(now, bytes, rate);
    ASSERT_LT(end, kHorizon);
    // Replay it against the test's own usage: in each cycle min(rate, free) until done.
    int64_t remaining = bytes, t = now;
    while (remaining > 0) {
      const int64_t take = std::min({rate, kCapacity - usage[static_cast<size_t>(t)], remaining});
      usage[static_cast<size_t>(t)] += take;
      remaining -= take;
      ++t;
    }
    EXPECT_EQ(end, t) << "request " << i;
  }
  for (int64_t used : usage) ASSERT_LE(used, kCapacity);
}

}  // namespace
