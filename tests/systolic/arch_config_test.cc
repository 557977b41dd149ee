// Architecture description: preset values against the published figures, derived peak rates,
// --set overrides, config files (round trip and errors with FILE:LINE:COL).
#include "simulator/isa/arch_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace systolic {
namespace {

std::string ErrorOf(auto&& fn) {
  try {
    fn();
  } catch (const hlo::Error& e) {
    std::string text = hlo::FormatError(e);
    return text.substr(0, text.find('\n'));
  }
  return "no error";
}

TEST(ArchConfig, TpuV1MatchesTheIsca2017Paper) {
  ArchConfig c = Preset("tpu-v1");
  EXPECT_EQ(c.name, "tpu-v1");
  EXPECT_EQ(c.array_rows, 256);
  EXPECT_EQ(c.array_cols, 256);
  EXPECT_EQ(c.dataflow, Dataflow::kWs);
  EXPECT_EQ(c.mxu_dtypes, kMxuInt8);
  EXPECT_DOUBLE_EQ(c.clock_mhz, 700);
  EXPECT_EQ(c.ub_bytes, 24 * 1024 * 1024);
  EXPECT_EQ(c.acc_bytes, 4096 * 256 * 4);  // 4096 rows of 256 32-bit accumulators
  EXPECT_DOUBLE_EQ(c.dram_bandwidth_gbps, 34);
  // The paper's 92 TOPS peak: 65,536 MACs x 2 ops x 700 MHz = 91.75e12.
  EXPECT_NEAR(PeakOpsPerSecond(c), 91.75e12, 1e9);
  // Horowitz 45 nm: 8-bit multiply (0.2 pJ) + 32-bit add (0.1 pJ).
  EXPECT_DOUBLE_EQ(c.energy_mac_int8_pj, 0.3);
  EXPECT_DOUBLE_EQ(c.energy_dram_pj_per_byte, 162.5);
}

TEST(ArchConfig, GemminiAndTpuV4Presets) {
  ArchConfig g = Preset("gemmini");
  EXPECT_EQ(g.array_rows, 16);
  EXPECT_EQ(g.array_cols, 16);
  EXPECT_EQ(g.ub_bytes, 256 * 1024);
  EXPECT_EQ(g.acc_bytes, 64 * 1024);
  EXPECT_EQ(g.ub_banks, 4);
  EXPECT_EQ(g.acc_banks, 2);
  ArchConfig v4 = Preset("tpu-v4-mxu");
  EXPECT_EQ(v4.array_rows, 128);
  EXPECT_EQ(v4.mxu_dtypes & kMxuBf16, kMxuBf16);
  // 8 MXUs per chip x 128 x 128 x 2 x 1.05 GHz = 275.2512e12: the paper's 275 TFLOPS.
  EXPECT_NEAR(8 * PeakOpsPerSecond(v4), 275.2512e12, 1e6);
  EXPECT_DOUBLE_EQ(8 * v4.dram_bandwidth_gbps, 1200);
  EXPECT_DOUBLE_EQ(v4.energy_mac_bf16_pj, 2.0);  // 1.1 (fp16 mult) + 0.9 (fp32 add)
  EXPECT_EQ(ErrorOf([] { Preset("tpu-v9"); }),
            "<input>:0:0: error: unknown preset 'tpu-v9' (presets: tpu-v1, gemmini, tpu-v4-mxu)");
}

TEST(ArchConfig, Overrides) {
  ArchConfig c = Preset("tpu-v1");
  ApplyOverride(c, "array.rows=32");
  ApplyOverride(c, "array.cols = 8");
  ApplyOverride(c, "ub.bytes=512KiB");
  ApplyOverride(c, "acc.bytes=1000");
  ApplyOverride(c, "array.dataflow=os");
  ApplyOverride(c, "array.dtypes=bf16,f32");
  ApplyOverride(c, "clock.mhz=1.5e3");
  ApplyOverride(c, "dram.bytes=1TiB");
  EXPECT_EQ(c.array_rows, 32);
  EXPECT_EQ(c.array_cols, 8);
  EXPECT_EQ(c.ub_bytes, 524288);
  EXPECT_EQ(c.acc_bytes, 1000);
  EXPECT_EQ(c.dataflow, Dataflow::kOs);
  EXPECT_EQ(c.mxu_dtypes, kMxuBf16 | kMxuF32);
  EXPECT_DOUBLE_EQ(c.clock_mhz, 1500);
  EXPECT_EQ(c.dram_bytes, int64_t{1} << 40);
  EXPECT_EQ(c.array_rows * c.array_cols, PeakMacsPerCycle(c));
}

TEST(ArchConfig, OverrideErrors) {
  ArchConfig c = Preset("gemmini");
  std::string unknown = ErrorOf([&] { ApplyOverride(c, "array.row=32"); });
  EXPECT_EQ(unknown.substr(0, 65),
            "--set:1:7: error: unknown key 'array.row' (valid keys: name, arra");
  EXPECT_NE(unknown.find("array.rows, array.cols"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "array.rows=0"); }),
            "--set:1:18: error: value '0' for 'array.rows' is outside its range [1, 4096]");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "array.rows=abc"); }),
            "--set:1:18: error: bad value 'abc' for 'array.rows': expected a non-negative integer");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "ub.bytes=64MiB"); }),
            "--set:1:16: error: value '64MiB' for 'ub.bytes' is outside its range [1, 33554432]");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "clock.mhz=nan"); }),
            "--set:1:17: error: bad value 'nan' for 'clock.mhz': expected a number");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "array.dataflow=rs"); }),
            "--set:1:22: error: bad value 'rs' for 'array.dataflow': expected ws, os or is");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "link.topology=mesh"); }),
            "--set:1:21: error: bad value 'mesh' for 'link.topology': expected ring, torus2d, "
            "torus3d or switch");
  ArchConfig torus = c;
  ApplyOverride(torus, "link.topology=torus3d");
  EXPECT_EQ(torus.link_topology, LinkTopology::kTorus3d);
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "array.dtypes=int4"); }),
            "--set:1:20: error: bad value 'int4' for 'array.dtypes': expected a comma-separated "
            "list of int8, bf16, f32");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "array.rows"); }),
            "--set:1:7: error: expected KEY=VALUE, got 'array.rows'");
  EXPECT_EQ(ErrorOf([&] { ApplyOverride(c, "dram.bytes=99999999999TiB"); }),
            "--set:1:18: error: bad value '99999999999TiB' for 'dram.bytes': expected a "
            "non-negative integer");
  EXPECT_EQ(c, Preset("gemmini"));  // failed overrides leave the config unchanged
}

TEST(ArchConfig, ConfigFileRoundTripsEveryPreset) {
  for (std::string_view name : PresetNames()) {
    ArchConfig preset = Preset(name);
    std::string text = FormatConfig(preset);
    EXPECT_EQ(ParseConfigFile(text, "p.cfg", Preset("gemmini")), preset) << text;
  }
  EXPECT_NE(FormatConfig(Preset("tpu-v1")).find("ub.bytes = 24MiB\n"), std::string::npos);
}

TEST(ArchConfig, ConfigFileSyntaxAndErrors) {
  ArchConfig c = ParseConfigFile(
      "# my design\npreset = gemmini\n\narray.rows = 32   ; wider\n  vector.lanes=64\n", "my.cfg",
      Preset("tpu-v1"));
  ArchConfig expected = Preset("gemmini");
  expected.array_rows = 32;
  expected.vector_lanes = 64;
  EXPECT_EQ(c, expected);
  ArchConfig base = Preset("tpu-v1");
  std::string unknown =
      ErrorOf([&] { ParseConfigFile("array.rows = 8\n  ArrayHeight = 8\n", "my.cfg", base); });
  EXPECT_EQ(unknown.substr(0, 52), "my.cfg:2:3: error: unknown key 'ArrayHeight' (valid ");
  EXPECT_EQ(ErrorOf([&] { ParseConfigFile("array.rows = 8x\n", "my.cfg", base); }),
            "my.cfg:1:14: error: bad value '8x' for 'array.rows': expected a non-negative integer");
  EXPECT_EQ(ErrorOf([&] { ParseConfigFile("array.rows 8\n", "my.cfg", base); }),
            "my.cfg:1:1: error: expected 'key = value'");
  EXPECT_EQ(ErrorOf([&] { ParseConfigFile("array.rows = 8\npreset = gemmini\n", "my.cfg", base); }),
            "my.cfg:2:1: error: 'preset' must come before every other key");
  EXPECT_EQ(ErrorOf([&] { ParseConfigFile("preset = tpu\n", "my.cfg", base); }),
            "my.cfg:1:10: error: unknown preset 'tpu' (presets: tpu-v1, gemmini, tpu-v4-mxu)");
  EXPECT_EQ(ErrorOf([&] { ParseConfigFile("name =\n", "my.cfg", base); }),
            "my.cfg:1:7: error: empty value for 'name'");
}

TEST(ArchConfig, LoadPresetOrFileWithOverrides) {
  std::vector<std::string> sets = {"array.rows=64", "array.cols=64"};
  ArchConfig c = LoadArchConfig("gemmini", sets);
  EXPECT_EQ(c.array_rows, 64);
  EXPECT_EQ(c.ub_bytes, 256 * 1024);
  std::string path = ::testing::TempDir() + "systolic_arch_test.cfg";
  std::ofstream(path) << "preset = tpu-v4-mxu\nclock.mhz = 940\n";
  ArchConfig f = LoadArchConfig(path, sets);
  EXPECT_DOUBLE_EQ(f.clock_mhz, 940);
  EXPECT_EQ(f.array_cols, 64);
  EXPECT_EQ(f.name, "tpu-v4-mxu");
  std::remove(path.c_str());
  EXPECT_NE(ErrorOf([] { LoadArchConfig("/nonexistent/x.cfg", {}); }).find("cannot open"),
            std::string::npos);
}

// Every command that takes --config reads it through LoadArchConfig, which refuses a file over
// 1 MiB before reading it (a real config is a few dozen lines).
TEST(ArchConfig, OversizedConfigFileIsRefused) {
  const std::string path = ::testing::TempDir() + "systolic_arch_big.cfg";
  std::ofstream(path) << "# " << std::string((1 << 20) + 1, 'x') << "\n";
  const std::string error = ErrorOf([&] { LoadArchConfig(path, {}); });
  std::remove(path.c_str());
  EXPECT_NE(error.find("config file is larger than 1048576 bytes"), std::string::npos) << error;
}

TEST(ArchConfig, KeysMarkdownListsEveryKey) {
  std::string table = KeysMarkdown();
  for (const ArchKey& key : ArchKeys())
    EXPECT_NE(table.find("| `" + std::string(key.key) + "` |"), std::string::npos) << key.key;
}

}  // namespace
}  // namespace systolic
