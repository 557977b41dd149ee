// `retarget run` on several devices, end to end through the shell: the device count from the
// module's header or --devices, inputs and outputs stacked along a leading device dimension,
// random inputs that differ per device, every target (an executable per device) agreeing with
// the interpreter, and the refusals (a device count the module cannot split into, an input file
// without the device dimension).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli_fixture.h"
#include "tools/io/npz.h"

namespace {

using Result = testing_support::CommandResult;
using CliDevicesTest = testing_support::CliFixture;

// out0 = the sum of every device's p (all replicas and partitions: no groups listed),
// out1 = this device's partition id.
constexpr char kSumAll[] =
    "HloModule sum_all, num_partitions=2\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  p = f32[3] parameter(0)\n"
    "  sum = f32[3] all-reduce(p), channel_id=1, replica_groups={}, to_apply=add\n"
    "  pid = u32[] partition-id()\n"
    "  ROOT t = (f32[3], u32[]) tuple(sum, pid)\n"
    "}\n";

TEST_F(CliDevicesTest, RunStacksEveryDevicesInputsAndOutputs) {
  Write("m.hlo", kSumAll);
  Result first =
      Retarget("run m.hlo --target interp --save-inputs args.npz --output first.npz");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("devices: 2 (1 replica(s) x 2 partition(s))"), std::string::npos)
      << first.out;
  std::vector<io::NpyArray> args = io::ReadNpz(Path("args.npz"));
  ASSERT_EQ(args.size(), 1u);
  ASSERT_EQ(args[0].literal.shape().dims, (std::vector<int64_t>{2, 3}));
  auto in = args[0].literal.data<float>();
  EXPECT_NE(in[0], in[3]) << "random inputs must differ per device";
  std::vector<io::NpyArray> outputs = io::ReadNpz(Path("first.npz"));
  ASSERT_EQ(outputs.size(), 2u);
  ASSERT_EQ(outputs[0].literal.shape().dims, (std::vector<int64_t>{2, 3}));
  for (int64_t device = 0; device < 2; ++device) {
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(outputs[0].literal.data<float>()[device * 3 + i], in[i] + in[3 + i]);
    }
    EXPECT_EQ(outputs[1].literal.GetAsInt64(device), device);
  }
  // The saved inputs reproduce the run, on the cpu target too (an executable per device).
  Result again = Retarget("run m.hlo --target interp --inputs args.npz --output again.npz");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Retarget("compare first.npz again.npz --rtol 0 --atol 0").exit_code, 0);
  Result cpu = Retarget("run m.hlo --target cpu --inputs args.npz --output cpu.npz "
                        "--compare interp");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_NE(cpu.out.find("target: cpu, devices: 2"), std::string::npos) << cpu.out;
  EXPECT_NE(cpu.out.find("MATCHED (2 arrays, 8 elements)"), std::string::npos) << cpu.out;
  EXPECT_EQ(Retarget("compare first.npz cpu.npz --rtol 0 --atol 0").exit_code, 0);

  // Four devices are two replicas of the two partitions; the sum covers all four.
  Result four = Retarget("run m.hlo --target interp --devices 4 --save-inputs four_in.npz "
                         "--output four.npz");
  ASSERT_EQ(four.exit_code, 0) << four.err;
  std::vector<io::NpyArray> four_args = io::ReadNpz(Path("four_in.npz"));
  std::vector<io::NpyArray> four_out = io::ReadNpz(Path("four.npz"));
  auto four_in = four_args[0].literal.data<float>();
  EXPECT_FLOAT_EQ(four_out[0].literal.data<float>()[9],
                  four_in[0] + four_in[3] + four_in[6] + four_in[9]);
  EXPECT_EQ(four_out[1].literal.GetAsInt64(3), 1);  // device 3: replica 1, partition 1
}

// Every target runs every device: the accelerator as one simulated chip per device (each chip's
// simulated time printed), the gpu by host emulation of one artifact per device.
TEST_F(CliDevicesTest, AcceleratorChipsAndEmulatedGpusRunEveryDevice) {
  Write("m.hlo", kSumAll);
  Result systolic = Retarget("run m.hlo --target systolic --set link.bandwidth_gbps=100 "
                             "--compare interp");
  ASSERT_EQ(systolic.exit_code, 0) << systolic.err;
  EXPECT_NE(systolic.out.find("target: systolic, devices: 2"), std::string::npos) << systolic.out;
  EXPECT_NE(systolic.out.find("device 1: simulated "), std::string::npos) << systolic.out;
  EXPECT_NE(systolic.out.find("MATCHED (2 arrays, 8 elements)"), std::string::npos)
      << systolic.out;
  Result gpu = Retarget("run m.hlo --target gpu --compare interp");
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  EXPECT_NE(gpu.out.find("target: gpu, devices: 2"), std::string::npos) << gpu.out;
  EXPECT_NE(gpu.out.find("MATCHED (2 arrays, 8 elements)"), std::string::npos) << gpu.out;
}

TEST_F(CliDevicesTest, RunRefusesWhatItCannotSplit) {
  Write("m.hlo", kSumAll);
  Result three = Retarget("run m.hlo --target interp --devices 3");
  EXPECT_EQ(three.exit_code, 1);
  EXPECT_NE(three.err.find("has 2 partitions, so a run has a multiple of that many devices"),
            std::string::npos)
      << three.err;
  // One device runs device 0 alone: the sum is its own input.
  Result one = Retarget("run m.hlo --target cpu --devices 1 --compare interp");
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("MATCHED"), std::string::npos) << one.out;
  hlo::Literal flat(hlo::Shape::Array(hlo::PrimitiveType::kF32, {3}));
  io::WriteNpz(Path("flat.npz"), {{"arg0", flat}});
  Result unstacked = Retarget("run m.hlo --target interp --inputs flat.npz");
  EXPECT_EQ(unstacked.exit_code, 1);
  EXPECT_NE(unstacked.err.find("flat.npz: entry 'arg0' has shape f32[3]; a run on 2 devices "
                               "needs a leading dimension of 2"),
            std::string::npos)
      << unstacked.err;
  Write("bad.hlo", std::string(kSumAll).replace(std::string(kSumAll).find("num_partitions=2"),
                                                16, "num_partitions=0"));
  Result bad = Retarget("run bad.hlo --target interp");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("num_partitions=0 is not a device count"), std::string::npos) << bad.err;
}

}  // namespace
