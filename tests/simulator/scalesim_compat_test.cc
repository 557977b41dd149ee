// SCALE-Sim file readers and COMPUTE_REPORT.csv: what they accept (the shipped configs and
// topologies), the errors they give with FILE:LINE:COL, and the report's exact text.
#include "simulator/scalesim_compat.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/test_support.h"

namespace simulator {
namespace {

constexpr char kConfig[] =
    "[general]\n"
    "run_name = tiny\n"
    "\n"
    "[architecture_presets]\n"
    "ArrayHeight:    4\n"
    "ArrayWidth:     3\n"
    "IfmapSramSzkB:    64 \n"
    "FilterSramSzkB:   64\n"
    "OfmapSramSzkB:   64\n"
    "IfmapOffset:    0\n"
    "FilterOffset:   10000000\n"
    "OfmapOffset:    20000000\n"
    "Dataflow : ws\n"
    "Bandwidth : 10\n"
    "MemoryBanks: 1\n"
    "\n"
    "[run_presets]\n"
    "InterfaceBandwidth: CALC\n";

// Expects `text` to fail to parse as a config with `message` at line:col.
void ExpectConfigError(const std::string& text, uint32_t line, uint32_t col,
                       const std::string& message) {
  try {
    ParseScaleSimConfig(text, "x.cfg");
    FAIL() << "expected an error: " << message;
  } catch (const hlo::Error& e) {
    ASSERT_TRUE(e.location().file);
    EXPECT_EQ(*e.location().file, "x.cfg");
    EXPECT_EQ(e.location().line, line) << e.message();
    EXPECT_EQ(e.location().column, col) << e.message();
    EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
  }
}

void ExpectTopologyError(const std::string& text, bool gemm, uint32_t line, uint32_t col,
                         const std::string& message) {
  try {
    ParseScaleSimTopology(text, "t.csv", gemm);
    FAIL() << "expected an error: " << message;
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.location().line, line) << e.message();
    EXPECT_EQ(e.location().column, col) << e.message();
    EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
  }
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(ScaleSimConfig, ParsesKeysCaseInsensitively) {
  ScaleSimConfig c = ParseScaleSimConfig(kConfig, "x.cfg");
  EXPECT_EQ(c.run_name, "tiny");
  EXPECT_EQ(c.array.rows, 4);
  EXPECT_EQ(c.array.cols, 3);
  EXPECT_EQ(c.array.dataflow, systolic::Dataflow::kWs);
  EXPECT_EQ(c.ifmap_sram_kb, 64);
  EXPECT_EQ(c.interface_bandwidth, "CALC");
  EXPECT_EQ(c.bandwidth, "10");
  // configparser lower-cases keys: "arrayheight = 8" is the same key.
  EXPECT_EQ(ParseScaleSimConfig(Replace(kConfig, "ArrayHeight:    4", "arrayheight = 8"), "x.cfg")
                .array.rows,
            8);
}

TEST(ScaleSimConfig, ShippedConfigsParse) {
  const std::string dir = std::string(RETARGET_CORPUS_DIR) + "/../../anchors/scalesim/configs/";
  ScaleSimConfig google = ParseScaleSimConfig(testing_support::ReadFile(dir + "google.cfg"),
                                              "google.cfg");
  EXPECT_EQ(google.array.rows, 256);
  EXPECT_EQ(google.array.dataflow, systolic::Dataflow::kWs);
  ScaleSimConfig eyeriss = ParseScaleSimConfig(testing_support::ReadFile(dir + "eyeriss.cfg"),
                                               "eyeriss.cfg");
  EXPECT_EQ(eyeriss.array.rows, 12);
  EXPECT_EQ(eyeriss.array.cols, 14);
  ScaleSimConfig scale = ParseScaleSimConfig(testing_support::ReadFile(dir + "scale.cfg"),
                                             "scale.cfg");
  EXPECT_EQ(scale.array.dataflow, systolic::Dataflow::kOs);
}

TEST(ScaleSimConfig, ErrorsNameLineAndColumn) {
  // Line 13 is "Dataflow : ws"; the value starts at column 12.
  ExpectConfigError(Replace(kConfig, "Dataflow : ws", "Dataflow : rs"), 13, 12,
                    "Dataflow: expected os, ws or is, got 'rs'");
  ExpectConfigError(Replace(kConfig, "ArrayWidth:     3", "ArrayWidth:     3x"), 6, 17,
                    "ArrayWidth: expected an integer, got '3x'");
  ExpectConfigError(Replace(kConfig, "ArrayWidth:     3", "ArrayWidth:     0"), 6, 17,
                    "out of range");
  ExpectConfigError(Replace(kConfig, "ArrayWidth:     3", "ArrayWidth:     99999999999999999999"),
                    6, 17, "out of range");
  ExpectConfigError(Replace(kConfig, "MemoryBanks: 1", "MemoryBanks 1"), 15, 1,
                    "expected 'key = value'");
  ExpectConfigError(Replace(kConfig, "MemoryBanks: 1", "ArrayWidth: 1"), 15, 1, "duplicate key");
  ExpectConfigError(Replace(kConfig, "[general]", "[general"), 1, 1, "expected ']'");
  // A missing key is reported at its section's header (line 4).
  ExpectConfigError(Replace(kConfig, "Dataflow : ws\n", ""), 4, 1,
                    "section [architecture_presets] lacks 'Dataflow'");
  ExpectConfigError(Replace(kConfig, "CALC", "FAST"), 18, 21, "expected CALC or USER");
  // USER mode needs Bandwidth.
  ExpectConfigError(Replace(Replace(kConfig, "CALC", "USER"), "Bandwidth : 10\n", ""), 4, 1,
                    "lacks 'Bandwidth'");
  ExpectConfigError(Replace(kConfig, "[run_presets]\nInterfaceBandwidth: CALC\n", ""), 0, 0,
                    "missing section [run_presets]");
}

TEST(ScaleSimTopology, GemmForm) {
  std::vector<TopologyLayer> layers =
      ParseScaleSimTopology("Layer,M,N,K,\n1,256,128,2048,\n\n two , 5 ,7, 2,\n", "t.csv", true);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].gemm.m, 256);
  EXPECT_EQ(layers[0].gemm.n, 128);
  EXPECT_EQ(layers[0].gemm.k, 2048);
  EXPECT_EQ(layers[1].name, "two");
  EXPECT_EQ(layers[1].location.line, 4u);
  EXPECT_EQ(layers[1].gemm.k, 2);
}

TEST(ScaleSimTopology, ConvFormAndDepthwise) {
  const std::string text =
      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
      "Strides,\n"
      "Conv1     ,224 ,224 ,11 ,11 ,3 ,96 ,4 ,\n"
      "Conv2_DP,7,7,3,3,3,1,1,\n";
  std::vector<TopologyLayer> layers = ParseScaleSimTopology(text, "t.csv", false);
  // Conv1: ceil((224-11+4)/4) = ceil(54.25) = 55 per axis -> M = 3025, N = 96, K = 363.
  ASSERT_EQ(layers.size(), 4u);  // Conv1 + 3 single-channel copies of the depthwise layer
  EXPECT_EQ(layers[0].gemm.m, 55 * 55);
  EXPECT_EQ(layers[0].gemm.n, 96);
  EXPECT_EQ(layers[0].gemm.k, 363);
  EXPECT_EQ(layers[2].name, "Conv2_DPChannel_1");
  EXPECT_EQ(layers[2].gemm.k, 9);  // 3x3 window on one channel
  EXPECT_EQ(layers[2].gemm.m, 25);
}

TEST(ScaleSimTopology, ErrorsNameLineAndColumn) {
  ExpectTopologyError("Layer,M,N,K,\n1,256,x8,2048,\n", true, 2, 7, "N: expected an integer");
  ExpectTopologyError("Layer,M,N,K,\n1,256,0,2048,\n", true, 2, 7, "out of range");
  ExpectTopologyError("Layer,M,N,K,\n1,256,128,\n", true, 2, 10, "expected 4 fields");
  // A GEMM file read as conv: too few fields, with a hint.
  ExpectTopologyError("Layer,M,N,K,\n1,256,128,2048,\n", false, 2, 15, "use --gemm");
  ExpectTopologyError("h\nc,2,8,3,3,1,1,1,\n", false, 2, 1, "filter height (3) is larger");
  ExpectTopologyError("Layer,M,N,K,\n", true, 0, 0, "no layers");
  ExpectTopologyError("Layer,M,N,K,\n,,,,\n", true, 0, 0, "no layers");  // a spacer row only
  ExpectTopologyError("h\nc,9,9,3,3,2000000000,1,1,\nd_DP,9,9,3,3,2000000000,1,1,\n", false, 3, 1,
                      "more than");
  // One depthwise row is one layer per channel: a short line may not ask for a million
  // (scalesim_fuzzer found a 134-byte file that did).
  ExpectTopologyError("h\nd_DP,9,9,3,3,70000,1,1,\n", false, 2, 1, "more than 65536 layers");
}

TEST(ScaleSimReport, ExactTextAsSCALESimWritesIt) {
  // SCALE-Sim 3.0.0 on a 4x3 os array, GEMMs (4,3,5) and (1,1,1), wrote these rows (its
  // "Total Cycles (incl. prefetch)" column aside): 9 = 1*10-1 and 5 = 1*6-1 cycles.
  ScaleSimConfig c = ParseScaleSimConfig(Replace(kConfig, "Dataflow : ws", "Dataflow : os"), "x");
  std::vector<TopologyLayer> layers =
      ParseScaleSimTopology("Layer,M,N,K,\na,4,3,5,\nd,1,1,1,\n", "t.csv", true);
  EXPECT_EQ(FormatComputeReport(TimeTopology(c, layers)),
            "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
            "Compute Util %,\n"
            "0, 9, 0, 55.55555555555556, 100.0, 50.0,\n"
            "1, 5, 0, 1.6666666666666667, 8.333333333333332, 1.3888888888888888,\n");
}

TEST(ScaleSimReport, PythonFloatRepr) {
  EXPECT_EQ(PythonFloatRepr(100.0), "100.0");
  EXPECT_EQ(PythonFloatRepr(0.0), "0.0");
  EXPECT_EQ(PythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(PythonFloatRepr(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(PythonFloatRepr(1e-5), "1e-05");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(PythonFloatRepr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(PythonFloatRepr(std::numeric_limits<double>::quiet_NaN()), "nan");
}

}  // namespace
}  // namespace simulator
