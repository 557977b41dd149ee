// `retarget scalesim` end to end: a tiny config and topology written by the test, the report it
// writes, the refusal to overwrite, and a malformed file reported as FILE:LINE:COL (exit 1).
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_fixture.h"
#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;

using Result = testing_support::CommandResult;

class ScalesimCliTest : public testing_support::CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    Write("tiny.cfg",
          "[general]\nrun_name = tiny\n\n[architecture_presets]\nArrayHeight: 4\nArrayWidth: 3\n"
          "IfmapSramSzkB: 64\nFilterSramSzkB: 64\nOfmapSramSzkB: 64\nIfmapOffset: 0\n"
          "FilterOffset: 10000000\nOfmapOffset: 20000000\nDataflow : os\nBandwidth : 10\n\n"
          "[run_presets]\nInterfaceBandwidth: CALC\n");
    Write("gemm.csv", "Layer,M,N,K,\na,4,3,5,\nb,5,7,2,\n");
  }
};

TEST_F(ScalesimCliTest, WritesTheComputeReport) {
  Result r = Retarget("scalesim --config tiny.cfg --topology gemm.csv --gemm -o out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // a: 1 fold of tau = 5+4+3-2 = 10 -> 9 cycles. b: 2*3 folds of tau = 2+4+3-2 = 7 -> 41 cycles;
  // PEs used rows {4,1} x cols {3,3,1} = 35 of 72 -> 48.61 %; 5*7*2 MACs = 70 of 41*12 PE-cycles.
  EXPECT_EQ(testing_support::ReadFile(Path("out/COMPUTE_REPORT.csv")),
            "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
            "Compute Util %,\n"
            "0, 9, 0, 55.55555555555556, 100.0, 50.0,\n"
            "1, 41, 0, 14.227642276422765, 48.611111111111114, 13.888888888888888,\n");
  EXPECT_NE(r.out.find("2 layers, 50 compute cycles"), std::string::npos) << r.out;

  // Never replaces an existing report without --force.
  Write("gemm.csv", "Layer,M,N,K,\na,1,1,1,\n");
  Result again = Retarget("scalesim --config tiny.cfg --topology gemm.csv --gemm -o out");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already exists (use --force to overwrite)"), std::string::npos)
      << again.err;
  EXPECT_NE(testing_support::ReadFile(Path("out/COMPUTE_REPORT.csv")).find("0, 9, 0"),
            std::string::npos);
  Result forced = Retarget("scalesim --config tiny.cfg --topology gemm.csv --gemm -o out --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(testing_support::ReadFile(Path("out/COMPUTE_REPORT.csv")).find("\n0, 5, 0,"),
            std::string::npos);
}

TEST_F(ScalesimCliTest, ConvTopology) {
  // 7x6 input, 3x2 filter, 2 channels, 5 filters, stride 2 -> M=9, N=5, K=12; os on 4x3:
  // 3*2 folds of tau = 12+4+3-2 = 17 -> 101 cycles.
  Write("conv.csv", "Layer name, H, W, R, S, C, NF, Stride,\nL1,7,6,3,2,2,5,2,\n");
  Result r = Retarget("scalesim --config tiny.cfg --topology conv.csv -o out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(testing_support::ReadFile(Path("out/COMPUTE_REPORT.csv")).find("\n0, 101, 0, "),
            std::string::npos);
}

TEST_F(ScalesimCliTest, MalformedFilesAreLocatedErrors) {
  Write("bad.csv", "Layer,M,N,K,\na,4,3,5,\nb,5,seven,2,\n");
  Result r = Retarget("scalesim --config tiny.cfg --topology bad.csv --gemm -o out");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("bad.csv:3:5: error: N: expected an integer, got 'seven'", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(Path("out/COMPUTE_REPORT.csv")));

  Write("bad.cfg", "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight: -4\n");
  Result c = Retarget("scalesim --config bad.cfg --topology gemm.csv --gemm -o out");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_EQ(c.err.rfind("bad.cfg:4:14: error: ArrayHeight", 0), 0u) << c.err;

  Result missing = Retarget("scalesim --config nope.cfg --topology gemm.csv --gemm -o out");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.cfg"), std::string::npos) << missing.err;
}

TEST_F(ScalesimCliTest, UsageErrors) {
  EXPECT_EQ(Retarget("scalesim --topology gemm.csv -o out").exit_code, 2);  // no --config
  EXPECT_EQ(Retarget("scalesim --config tiny.cfg --topology gemm.csv").exit_code, 2);  // no -o
  Result help = Retarget("scalesim --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("COMPUTE_REPORT.csv"), std::string::npos);
}

}  // namespace
