// Collective costs (compiler/communication.h) against the ring formulas worked by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/communication.h"
#include "tests/test_support.h"

namespace {

constexpr char kCollectives[] = R"(HloModule m, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024] parameter(0)
  ar = f32[1024] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
  ag = f32[4096] all-gather(p), channel_id=2, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true
  rs = f32[256] reduce-scatter(p), channel_id=3, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true, to_apply=add
  cp = f32[1024] collective-permute(p), channel_id=4, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  id = u32[] partition-id()
  ROOT t = (f32[1024], f32[4096], f32[256], f32[1024], u32[]) tuple(ar, ag, rs, cp, id)
})";

const hlo::Instruction& Find(const hlo::Module& module, const std::string& name) {
  for (const auto& inst : module.entry()->instructions()) {
    if (inst->name() == name) return *inst;
  }
  throw std::runtime_error("no " + name);
}

TEST(Communication, RingFormulasByHand) {
  auto module = testing_support::ParseAndVerify(kCollectives);
  const compiler::Interconnect link{"test link", 1e9, 1e-6, "by hand"};
  // all-reduce of 4096 bytes over 4: 2*3/4 of them per device, 6 steps.
  compiler::CollectiveTime ar = compiler::CollectiveSeconds(Find(*module, "ar"), 4, link);
  EXPECT_DOUBLE_EQ(ar.bytes_sent, 6144);
  EXPECT_DOUBLE_EQ(ar.seconds, 6144 / 1e9 + 6e-6);
  // all-gather into 16384 bytes: 3/4 of the result, 3 steps.
  compiler::CollectiveTime ag = compiler::CollectiveSeconds(Find(*module, "ag"), 4, link);
  EXPECT_DOUBLE_EQ(ag.seconds, 12288 / 1e9 + 3e-6);
  // reduce-scatter of 4096 bytes: 3/4 of the operand, 3 steps.
  EXPECT_DOUBLE_EQ(compiler::CollectiveSeconds(Find(*module, "rs"), 4, link).seconds,
                   3072 / 1e9 + 3e-6);
  // collective-permute: the operand once, one step, between two devices.
  compiler::CollectiveTime cp = compiler::CollectiveSeconds(Find(*module, "cp"), 4, link);
  EXPECT_DOUBLE_EQ(cp.seconds, 4096 / 1e9 + 1e-6);
  EXPECT_EQ(cp.group, 2);
  // Nothing moves for partition-id, a group of one, or a target without links.
  EXPECT_EQ(compiler::CollectiveSeconds(Find(*module, "id"), 4, link).seconds, 0);
  EXPECT_EQ(compiler::CollectiveSeconds(Find(*module, "ar"), 1, link).seconds, 0);
  EXPECT_EQ(compiler::CollectiveSeconds(Find(*module, "ar"), 4, compiler::Interconnect{}).seconds,
            0);
}

TEST(Communication, TorusDimensionsAreAsSquareAsTheGroupAllows) {
  using compiler::Topology;
  EXPECT_EQ(compiler::TorusDimensions(12, Topology::kTorus2d), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(compiler::TorusDimensions(16, Topology::kTorus2d), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(compiler::TorusDimensions(8, Topology::kTorus3d), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(compiler::TorusDimensions(64, Topology::kTorus3d), (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(compiler::TorusDimensions(7, Topology::kTorus2d), (std::vector<int64_t>{1, 7}));
  EXPECT_EQ(compiler::TorusDimensions(12, Topology::kRing), (std::vector<int64_t>{12}));
  EXPECT_EQ(compiler::TorusDimensions(12, Topology::kSwitch), (std::vector<int64_t>{12}));
}

// The same bytes on every topology (each chip still sends (n-1)/n of the buffer per phase);
// what changes is the number of latency-bound steps, worked here by hand for 16 devices.
TEST(Communication, TopologiesChangeTheStepsNotTheBytes) {
  auto module = testing_support::ParseAndVerify(kCollectives);
  const hlo::Instruction& ar = Find(*module, "ar");
  const hlo::Instruction& ag = Find(*module, "ag");
  compiler::Interconnect link{"test link", 1e9, 1e-6, "by hand"};
  const double ar_bytes = 2.0 * 15 / 16 * 4096, ag_bytes = 15.0 / 16 * 16384;
  // ring: 2 x 15 steps; all-gather 15.
  EXPECT_DOUBLE_EQ(compiler::CollectiveSeconds(ar, 16, link).seconds, ar_bytes / 1e9 + 30e-6);
  // 4 x 4 torus: 2 x (3 + 3) steps; all-gather 3 + 3.
  link.topology = compiler::Topology::kTorus2d;
  compiler::CollectiveTime torus = compiler::CollectiveSeconds(ar, 16, link);
  EXPECT_DOUBLE_EQ(torus.bytes_sent, ar_bytes);
  EXPECT_DOUBLE_EQ(torus.seconds, ar_bytes / 1e9 + 12e-6);
  EXPECT_DOUBLE_EQ(compiler::CollectiveSeconds(ag, 16, link).seconds, ag_bytes / 1e9 + 6e-6);
  // 2 x 2 x 4 torus: 2 x (1 + 1 + 3) steps.
  link.topology = compiler::Topology::kTorus3d;
  EXPECT_DOUBLE_EQ(compiler::CollectiveSeconds(ar, 16, link).seconds, ar_bytes / 1e9 + 10e-6);
  // switch: two exchanges for an all-reduce, one for an all-gather, each link + hop latency.
  link.topology = compiler::Topology::kSwitch;
  link.hop_seconds = 0.5e-6;
  EXPECT_DOUBLE_EQ(compiler::CollectiveSeconds(ar, 16, link).seconds, ar_bytes / 1e9 + 3e-6);
  EXPECT_DOUBLE_EQ(compiler::CollectiveSeconds(ag, 16, link).seconds, ag_bytes / 1e9 + 1.5e-6);
}

// Large messages are bandwidth-bound: the bus bandwidth (bytes sent / time) approaches the
// link's; what is missing is the latency term, 2(n-1) steps of 2 us against 0.6 ms of transfer
// (under 3 % at 8 devices for 256 MiB).
TEST(Communication, LargeMessagesReachTheLinkBandwidth) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m, num_partitions=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[67108864] parameter(0)
  ROOT ar = f32[67108864] all-reduce(p), channel_id=1, replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=add
})");
  const compiler::Interconnect nvlink{"NVLink 4", 450e9, 2e-6, ""};
  for (int64_t n : {2, 4, 8}) {
    compiler::CollectiveTime t = compiler::CollectiveSeconds(*module->entry()->root(), n, nvlink);
    const double transfer = t.bytes_sent / 450e9;
    EXPECT_NEAR(t.seconds - transfer, 2.0 * (n - 1) * 2e-6, 1e-12) << n << " devices";
    EXPECT_GT(t.bytes_sent / t.seconds / 450e9, 0.97) << n << " devices";
  }
}

}  // namespace
