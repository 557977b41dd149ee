// The GPU column's latency through the built binary: estimated with the reason where there is no
// driver (this machine), and measured through retarget-gpu-run against tests/gpu/fake_driver.cc
// (LD_LIBRARY_PATH puts the fake libcuda.so.1 first; it runs copy steps with memcpy and records
// 0.25 ms per CUDA event, so a one-step artifact measures exactly 0.25 ms). A model the GPU code
// generator refuses, or one over the budget, keeps its estimate and says why.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "tests/cli_fixture.h"
#include "tests/report/json_value.h"

namespace {

using report_test::JsonValue;
using Result = testing_support::CommandResult;
using ReportGpuLatencyTest = testing_support::CliFixture;

// One reshape between row-major shapes: the GPU code generator emits a single device-to-device
// copy step (no kernel), which the fake driver executes.
constexpr char kReshape[] = R"(HloModule reshape
ENTRY main {
  p = f32[4,2] parameter(0)
  ROOT r = f32[8] reshape(p)
})";

// TransformerEngine attention: a library call on the gpu target, which Retarget's GPU code
// generator does not link.
constexpr char kTe[] = R"(HloModule te
ENTRY main {
  q = f32[4] parameter(0)
  a = f32[4] custom-call(q), custom_call_target="te_fused_attn_forward_ffi"
  ROOT r = f32[4] add(a, q)
})";

bool RealDriverPresent() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) dlclose(driver);
  return driver != nullptr;
}

JsonValue GpuCell(const std::string& json_text) {
  return report_test::ParseJson(json_text)["models"].array.at(0)["targets"]["gpu"];
}

TEST_F(ReportGpuLatencyTest, WithoutADriverTheEstimateSaysWhy) {
  if (RealDriverPresent()) GTEST_SKIP() << "this machine has a CUDA driver";
  Write("m.hlo", kReshape);
  Result r = Retarget("report m.hlo --targets gpu --json r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const JsonValue gpu = GpuCell(testing_support::ReadFile(Path("r.json")));
  EXPECT_EQ(gpu["latency_source"].string, "estimated");
  EXPECT_EQ(gpu["latency_note"].string.rfind("no GPU: libcuda.so.1 could not be loaded (", 0), 0u)
      << gpu["latency_note"].string;
  EXPECT_NE(r.out.find("gpu latency estimated: no GPU: libcuda.so.1 could not be loaded"),
            std::string::npos)
      << r.out;
  // --estimate-only: not asked, and the note says so.
  Result e = Retarget("report m.hlo --targets gpu --estimate-only --json e.json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(GpuCell(testing_support::ReadFile(Path("e.json")))["latency_note"].string,
            "not run (--estimate-only)");
}

#ifdef RTGPU_FAKE_DRIVER_DIR
// `retarget ARGS` with the fake libcuda.so.1 found first.
std::string WithFakeDriver(const std::string& args) {
  return "LD_LIBRARY_PATH='" RTGPU_FAKE_DRIVER_DIR "' '" + testing_support::BinDir() +
         "/retarget' " + args;
}

// The fake driver names itself a test stand-in: its times are not measurements, and the report
// keeps the estimate and says why.
TEST_F(ReportGpuLatencyTest, ATestStandInDriverIsNotAMeasurement) {
  Write("m.hlo", kReshape);
  Result r = Shell(WithFakeDriver("report m.hlo --targets gpu --json r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const JsonValue gpu = GpuCell(testing_support::ReadFile(Path("r.json")));
  EXPECT_EQ(gpu["latency_source"].string, "estimated");
  EXPECT_EQ(gpu["latency_note"].string,
            "the CUDA driver is a test stand-in (Fake GPU (test stand-in, "
            "tests/gpu/fake_driver.cc)): not a measurement");
}

// With the stand-in accepted explicitly, the whole path runs: artifact, retarget-gpu-run, its
// median, and the device and driver recorded beside the figure.
TEST_F(ReportGpuLatencyTest, AFakeDriverIsMeasuredThroughRetargetGpuRun) {
  Write("m.hlo", kReshape);
  Result r = Shell("RETARGET_ACCEPT_STAND_IN_GPU=1 " +
                   WithFakeDriver("report m.hlo --targets gpu,cpu --json r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const JsonValue gpu = GpuCell(testing_support::ReadFile(Path("r.json")));
  EXPECT_EQ(gpu["latency_source"].string, "measured");
  EXPECT_EQ(gpu["latency_note"].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(gpu["latency_device"].string,
            "Fake GPU (test stand-in, tests/gpu/fake_driver.cc), driver 99999");
  EXPECT_NE(r.out.find("gpu latency measured on Fake GPU"), std::string::npos) << r.out;
  // One copy step, two events per run (start, after the step), 0.25 ms apart in the fake.
  EXPECT_DOUBLE_EQ(gpu["latency_ms"].number, 0.25);
  // The cost follows the measured latency: 0.25 ms x $4.54/hour per inference, x 1e6.
  EXPECT_NEAR(gpu["cost_per_1m_usd"].number, 0.25e-3 / 3600 * 4.54 * 1e6, 1e-12);
  EXPECT_NE(r.out.find("measured"), std::string::npos) << r.out;
}

TEST_F(ReportGpuLatencyTest, ACodeGeneratorRefusalOrTheBudgetKeepsTheEstimate) {
  Write("te.hlo", kTe);
  Write("m.hlo", kReshape);
  Result r = Shell(WithFakeDriver("report te.hlo --targets gpu --json r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const JsonValue gpu = GpuCell(testing_support::ReadFile(Path("r.json")));
  EXPECT_EQ(gpu["latency_source"].string, "estimated");
  const std::string note = gpu["latency_note"].string;
  EXPECT_EQ(note.rfind("the GPU code generator cannot compile it: ", 0), 0u) << note;
  EXPECT_NE(note.find("instruction a (custom-call)"), std::string::npos) << note;
  // `retarget compile` refuses it too, naming the instruction.
  Result compile = Retarget("compile te.hlo --target gpu -o te.rtgpu");
  EXPECT_EQ(compile.exit_code, 1);
  EXPECT_NE(compile.err.find("instruction a (custom-call)"), std::string::npos) << compile.err;

  Result over =
      Shell(WithFakeDriver("report m.hlo --targets gpu --max-run-seconds 0 --json o.json"));
  ASSERT_EQ(over.exit_code, 0) << over.err;
  const JsonValue o = GpuCell(testing_support::ReadFile(Path("o.json")));
  EXPECT_EQ(o["latency_source"].string, "estimated");
  EXPECT_EQ(o["latency_note"].string.rfind("over the latency budget: estimated ", 0), 0u)
      << o["latency_note"].string;
  EXPECT_NE(o["latency_note"].string.find(" > 0 s (max-run-seconds)"), std::string::npos);
}
#endif

}  // namespace
