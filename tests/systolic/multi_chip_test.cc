// Several accelerator chips (targets/systolic/chip_links.h): a sharded module on N simulated
// chips gives every device the interpreter's results, each collective's link time is the ring
// formula over the configured links (computed here by hand), a chip that reaches a collective
// early waits for the group's last one, and without links a collective goes through the host.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hlo/multi_device.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace {

struct ChipRun {
  std::vector<hlo::Literal> results;
  std::vector<std::map<std::string, double>> counters;  // per chip
};

ChipRun RunOnChips(const hlo::Module& module, const systolic::ArchConfig& config,
                   const std::vector<std::vector<hlo::Literal>>& inputs) {
  const hlo::DeviceGrid grid = hlo::ModuleDeviceGrid(module);
  auto backend =
      targets::MakeSystolicBackend(config, testing_support::Backends().Find("interp"));
  EXPECT_TRUE(backend->multi_device());
  const auto chips = targets::CompileForDevices(*backend, module, grid.size());
  ChipRun run;
  run.results = targets::RunAsDevices(chips, grid, inputs);
  for (const auto& chip : chips) run.counters.push_back(chip->profile().counters);
  return run;
}

std::vector<std::vector<hlo::Literal>> InputsPerDevice(const hlo::Module& module) {
  std::vector<std::vector<hlo::Literal>> inputs;
  for (int64_t d = 0; d < hlo::ModuleDeviceGrid(module).size(); ++d)
    inputs.push_back(io::MakeRandomInputs(module, 11 + static_cast<uint64_t>(d)));
  return inputs;
}

systolic::ArchConfig WithLinks(double gbps, double latency_ns) {
  systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
  config.link_bandwidth_gbps = gbps;
  config.link_latency_ns = latency_ns;
  return config;
}

// One all-reduce of f32[256,64] (64 KiB) over four chips, then an all-gather and a permute.
constexpr char kFourChips[] = R"(HloModule four_chips, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[256,64] parameter(0)
  sum = f32[256,64] all-reduce(x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
  gathered = f32[1024,64] all-gather(x), channel_id=2, replica_groups={{0,1,2,3}}, use_global_device_ids=true, dimensions={0}
  next = f32[256,64] collective-permute(x), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  pid = u32[] partition-id()
  ROOT t = (f32[256,64], f32[1024,64], f32[256,64], u32[]) tuple(sum, gathered, next, pid)
}
)";

TEST(MultiChip, EveryChipMatchesTheInterpreterAndPaysTheRingFormula) {
  auto module = testing_support::ParseAndVerify(kFourChips);
  const auto inputs = InputsPerDevice(*module);
  const double gbps = 100, latency_ns = 500;
  const systolic::ArchConfig config = WithLinks(gbps, latency_ns);
  const ChipRun run = RunOnChips(*module, config, inputs);
  const std::vector<hlo::Literal> expected =
      hlo::EvaluateOnDevices(*module, hlo::ModuleDeviceGrid(*module), inputs);
  ASSERT_EQ(run.results.size(), 4u);
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_TRUE(run.results[d].BitwiseEqual(expected[d])) << "chip " << d;
  }
  // By hand: S = 65536 bytes, n = 4, B = 1e11 B/s, a = 500 ns.
  //   all-reduce  2(n-1)/n S/B + 2(n-1) a   all-gather (n-1)/n (4S)/B + (n-1) a
  //   permute     S/B + a
  const double s = 65536, b = gbps * 1e9, a = latency_ns * 1e-9;
  const double seconds = (1.5 * s / b + 6 * a) + (0.75 * 4 * s / b + 3 * a) + (s / b + a);
  const double clock_hz = config.clock_mhz * 1e6;
  for (size_t d = 0; d < 4; ++d) {
    const auto& c = run.counters[d];
    EXPECT_EQ(c.at("collectives"), 3) << d;
    // Each collective's cycles are rounded on their own: within one cycle each.
    EXPECT_NEAR(c.at("link_cycles"), seconds * clock_hz, 3) << d;
    EXPECT_DOUBLE_EQ(c.at("link_bytes"), 1.5 * s + 0.75 * 4 * s + s) << d;
    // The same program on every chip: nobody waits.
    EXPECT_EQ(c.at("collective_wait_cycles"), 0) << d;
    EXPECT_GT(c.at("link_share"), 0) << d;
  }
  // A 2 x 2 torus: the all-reduce takes 2 x (1 + 1) steps instead of 6, the all-gather 2
  // instead of 3; the bytes are the ring's.
  systolic::ArchConfig torus = config;
  torus.link_topology = systolic::LinkTopology::kTorus2d;
  const ChipRun on_torus = RunOnChips(*module, torus, inputs);
  EXPECT_NEAR(on_torus.counters[0].at("link_cycles"), (seconds - 3 * a) * clock_hz, 3);
  EXPECT_DOUBLE_EQ(on_torus.counters[0].at("link_bytes"), run.counters[0].at("link_bytes"));
  // Links twice as fast halve the bandwidth part.
  const ChipRun faster = RunOnChips(*module, WithLinks(2 * gbps, latency_ns), inputs);
  const double faster_seconds = seconds - (1.5 + 3 + 1) * s / b / 2;
  EXPECT_NEAR(faster.counters[0].at("link_cycles"), faster_seconds * clock_hz, 3);
}

TEST(MultiChip, AChipThatArrivesEarlyWaitsForTheLastOne) {
  // Partition 0 multiplies a 512 x 512 matrix before the all-reduce; partition 1 does not.
  auto module = testing_support::ParseAndVerify(R"(HloModule uneven, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
busy {
  p = f32[512,512] parameter(0)
  d = f32[512,512] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  ROOT r = f32[512] reduce(d, zero), dimensions={1}, to_apply=add
}
idle {
  p = f32[512,512] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[512] reduce(p, zero), dimensions={1}, to_apply=add
}
ENTRY main {
  m = f32[512,512] parameter(0)
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(pid, zero), direction=EQ
  v = f32[512] conditional(first, m, m), true_computation=busy, false_computation=idle
  ROOT sum = f32[512] all-reduce(v), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
)");
  const auto inputs = InputsPerDevice(*module);
  const ChipRun run = RunOnChips(*module, WithLinks(100, 500), inputs);
  const auto& busy = run.counters[0];
  const auto& idle = run.counters[1];
  EXPECT_EQ(busy.at("collective_wait_cycles"), 0);
  EXPECT_GT(idle.at("collective_wait_cycles"), 0);
  // After the collective both chips are at the same cycle: the step ends together.
  EXPECT_EQ(busy.at("cycles"), idle.at("cycles"));
  const std::vector<hlo::Literal> expected =
      hlo::EvaluateOnDevices(*module, hlo::ModuleDeviceGrid(*module), inputs);
  // The dot runs on the matrix unit (its own rounding): the per-type tolerance, scaled for a
  // 512-long contraction as `run --compare` does.
  for (size_t d = 0; d < 2; ++d) {
    const io::CompareResult compare =
        io::CompareArrays(io::FlattenOutputs(expected[d]), io::FlattenOutputs(run.results[d]),
                          nullptr, io::ReductionToleranceScale(512));
    EXPECT_TRUE(compare.matched) << "chip " << d << ": " << compare.summary;
  }
}

TEST(MultiChip, WithoutLinksACollectiveGoesThroughTheHost) {
  auto module = testing_support::ParseAndVerify(kFourChips);
  const ChipRun run = RunOnChips(*module, WithLinks(0, 0), InputsPerDevice(*module));
  for (const auto& c : run.counters) {
    EXPECT_EQ(c.at("collectives"), 0);
    EXPECT_EQ(c.at("link_cycles"), 0);
    EXPECT_GT(c.at("host_fallback_bytes"), 3 * 65536);  // each collective's operand and result
  }
}

}  // namespace
