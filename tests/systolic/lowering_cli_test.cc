// `retarget run --target systolic` end to end: --config/--set, --compare interp, --stats-json
// with the counters at the top level, --emit-asm, --trace, and the errors for impossible
// configurations and for the systolic-only flags on other targets.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/cli_fixture.h"
#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;

class SystolicCli : public testing_support::CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    Write("dot.hlo", R"(HloModule m
ENTRY main {
  x = f32[6,5] parameter(0)
  w = f32[5,7] parameter(1)
  ROOT d = f32[6,7] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  }
  // Runs `retarget ARGS` in the temporary folder; returns the exit status, keeps the output.
  int Retarget(const std::string& args) {
    testing_support::CommandResult result = CliFixture::Retarget(args);
    out_ = result.out;
    err_ = result.err;
    return result.exit_code;
  }

  std::string out_, err_;
};

constexpr char kSmallF32[] =
    "--set array.rows=4 --set array.cols=4 --set array.dtypes=int8,bf16,f32";

TEST_F(SystolicCli, RunMatchesAndWritesStatsAsmAndTrace) {
  ASSERT_EQ(Retarget(std::string("run dot.hlo --target systolic ") + kSmallF32 +
                     " --compare interp --stats-json s.json --emit-asm p.sasm --trace t.json"),
            0)
      << err_;
  EXPECT_NE(out_.find("MATCHED"), std::string::npos) << out_;
  std::string stats = testing_support::ReadFile(Path("s.json"));
  for (const char* key : {"\"cycles\": ", "\"clock_mhz\": 700", "\"achieved_tops\": ",
                          "\"mac_utilization\": ", "\"dram_bytes_read\": ", "\"energy_pj\": ",
                          "\"host_fallback_share\": 0", "\"macs\": 210"}) {
    EXPECT_NE(stats.find(key), std::string::npos) << key << " in " << stats;
  }
  std::string sasm = testing_support::ReadFile(Path("p.sasm"));
  EXPECT_EQ(sasm.rfind("# segment 0: d\n", 0), 0u) << sasm;
  EXPECT_NE(sasm.find("mxu.matmul"), std::string::npos);
  std::string trace = testing_support::ReadFile(Path("t.json"));
  EXPECT_NE(trace.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(trace.find("mxu.matmul"), std::string::npos);
}

// The default machine is TPU v1 with the bf16/f32 matrix modes the systolic target description
// assumes: an f32 dot runs natively, as the ownership analysis counts it.
TEST_F(SystolicCli, DefaultConfigurationRunsF32DotsNatively) {
  ASSERT_EQ(Retarget("run dot.hlo --target systolic --compare interp --stats-json s.json"), 0)
      << err_;
  std::string stats = testing_support::ReadFile(Path("s.json"));
  EXPECT_NE(stats.find("\"host_instructions\": 0"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"native_instructions\": 1"), std::string::npos) << stats;
}

TEST_F(SystolicCli, ImpossibleConfigurationIsRejectedWithTheReason) {
  EXPECT_EQ(Retarget("run dot.hlo --target systolic --set array.rows=0"), 1);
  EXPECT_NE(err_.find("'array.rows' is outside its range [1, 4096]"), std::string::npos) << err_;
  EXPECT_EQ(Retarget("run dot.hlo --target systolic --set dram.bytes=64"), 1);
  EXPECT_NE(err_.find("needs more DRAM than dram.bytes = 64"), std::string::npos) << err_;
}

TEST_F(SystolicCli, AnUnfittingBufferFallsBackToTheHost) {
  // 64 bytes of unified buffer hold no tile: the dot runs on the host, still correct.
  ASSERT_EQ(Retarget(std::string("run dot.hlo --target systolic ") + kSmallF32 +
                     " --set ub.bytes=64 --compare interp --emit-asm p.sasm"),
            0)
      << err_;
  EXPECT_NE(out_.find("MATCHED"), std::string::npos);
  EXPECT_NE(testing_support::ReadFile(Path("p.sasm")).find("# host: d (no tile of a 6x5x7"),
            std::string::npos);
}

TEST_F(SystolicCli, SystolicFlagsOnOtherTargetsAreUsageErrors) {
  EXPECT_EQ(Retarget("run dot.hlo --target interp --set array.rows=4"), 2);
  EXPECT_NE(err_.find("apply to --target systolic only"), std::string::npos) << err_;
}

}  // namespace
