// The sweep's axes: alias expansion (each alias's arithmetic checked by hand), the cross
// product's numbering (last axis fastest, as nested loops), and every error a user can cause,
// each checked for the message that tells them what to type instead.
#include "tools/sweep/sweep_space.h"

#include <gtest/gtest.h>

#include "hlo/diagnostic.h"

namespace {

using sweep::ExpandSetting;
using Strings = std::vector<std::string>;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const hlo::Error& e) {
    return e.message();
  }
  return "(no error)";
}

TEST(SweepSpaceTest, AliasesExpandToFullKeys) {
  EXPECT_EQ(ExpandSetting("array", "16x32"), (Strings{"array.rows=16", "array.cols=32"}));
  EXPECT_EQ(ExpandSetting("array", "64"), (Strings{"array.rows=64", "array.cols=64"}));
  EXPECT_EQ(ExpandSetting("array", "8X4"), (Strings{"array.rows=8", "array.cols=4"}));
  EXPECT_EQ(ExpandSetting("dram_gbps", "34"), (Strings{"dram.bandwidth_gbps=34"}));
  EXPECT_EQ(ExpandSetting("sram_kib", "256"), (Strings{"ub.bytes=262144"}));  // 256 * 1024
  EXPECT_EQ(ExpandSetting("clock_mhz", "940"), (Strings{"clock.mhz=940"}));
  // Every full key of arch_config.def passes through unchanged.
  EXPECT_EQ(ExpandSetting("vector.lanes", "128"), (Strings{"vector.lanes=128"}));
  EXPECT_EQ(ExpandSetting("array.dataflow", "os"), (Strings{"array.dataflow=os"}));
}

TEST(SweepSpaceTest, UnknownKeysListTheValidOnes) {
  const std::string message = ErrorOf([] { ExpandSetting("dram_gb", "1"); });
  EXPECT_NE(message.find("unknown key 'dram_gb'"), std::string::npos) << message;
  for (const char* key : {"array", "dram_gbps", "sram_kib", "clock_mhz", "array.rows",
                          "dram.bandwidth_gbps", "ub.bytes", "energy.dram_pj_per_byte"}) {
    EXPECT_NE(message.find(key), std::string::npos) << key << " missing from: " << message;
  }
  EXPECT_EQ(sweep::ValidSweepKeys().rfind("array, dram_gbps, sram_kib, clock_mhz, name", 0), 0u);
}

TEST(SweepSpaceTest, MalformedAliasValuesAreErrors) {
  EXPECT_NE(ErrorOf([] { ExpandSetting("array", "16x"); }).find("expected RxC"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ExpandSetting("array", "0x16"); }).find("whole number >= 1, got '0'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { ExpandSetting("sram_kib", "1.5"); }).find("got '1.5'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ExpandSetting("sram_kib", "99999999999999999999"); }).find("whole number"),
            std::string::npos);
}

TEST(SweepSpaceTest, CrossProductNumbersPointsLikeNestedLoops) {
  const systolic::ArchConfig base = systolic::Preset("tpu-v1");
  const Strings sets = {"array=16x16,32x32", "dram_gbps=10,20,40"};
  const sweep::SweepSpace space = sweep::BuildSweepSpace(sets, base);
  ASSERT_EQ(space.size(), 6);
  ASSERT_EQ(space.axes().size(), 2u);
  EXPECT_EQ(space.axes()[0].key, "array");
  // Point 4 = (4 / 3, 4 % 3) = (array 1, dram 1).
  const sweep::SweepPoint p4 = space.Point(4);
  EXPECT_EQ(p4.values, (Strings{"32x32", "20"}));
  EXPECT_EQ(p4.assignments, (Strings{"array.rows=32", "array.cols=32", "dram.bandwidth_gbps=20"}));
  EXPECT_EQ(space.Point(0).values, (Strings{"16x16", "10"}));
  EXPECT_EQ(space.Point(2).values, (Strings{"16x16", "40"}));
  EXPECT_EQ(space.Point(3).values, (Strings{"32x32", "10"}));
  const systolic::ArchConfig config = sweep::PointConfig(base, p4);
  EXPECT_EQ(config.array_rows, 32);
  EXPECT_EQ(config.array_cols, 32);
  EXPECT_DOUBLE_EQ(config.dram_bandwidth_gbps, 20.0);
  EXPECT_EQ(config.ub_bytes, base.ub_bytes);  // untouched keys keep the base's value
  EXPECT_NE(ErrorOf([&] { space.Point(6); }).find("outside the sweep (points 0..5)"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { space.Point(-1); }).find("outside"), std::string::npos);
}

TEST(SweepSpaceTest, EveryValueIsCheckedBeforeAnyPointRuns) {
  const systolic::ArchConfig base = systolic::Preset("gemmini");
  auto build = [&](Strings sets) { return ErrorOf([&] { sweep::BuildSweepSpace(sets, base); }); };
  // The last value is out of array.rows' range 1..4096.
  EXPECT_NE(build({"array=16x16,8192x8192"}).find("array.rows"), std::string::npos);
  EXPECT_NE(build({"dram_gbps=10,abc"}).find("abc"), std::string::npos);
  EXPECT_NE(build({"frob=1"}).find("valid keys: array, dram_gbps"), std::string::npos);
  EXPECT_NE(build({"array=16x16", "array.rows=8"}).find("'array.rows' is already set"),
            std::string::npos);
  EXPECT_NE(build({"dram_gbps"}).find("expected KEY=V1,V2"), std::string::npos);
  EXPECT_NE(build({"dram_gbps=10,,20"}).find("empty value"), std::string::npos);
  EXPECT_NE(build({"dram_gbps="}).find("empty value"), std::string::npos);
}

TEST(SweepSpaceTest, TheNumberOfPointsIsBounded) {
  std::string many = "clock_mhz=";
  for (int i = 1; i <= 1000; ++i) {
    if (i > 1) many += ',';
    many += std::to_string(i);
  }
  const systolic::ArchConfig base = systolic::Preset("tpu-v1");
  EXPECT_EQ(sweep::BuildSweepSpace(Strings{many}, base).size(), 1000);
  const std::string message = ErrorOf([&] {
    sweep::BuildSweepSpace(Strings{many,
                                   "vector.lanes=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,"
                                   "18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,"
                                   "37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,"
                                   "56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,"
                                   "75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,"
                                   "94,95,96,97,98,99,100,101"},
                           base);
  });
  EXPECT_NE(message.find("more than 100000 points"), std::string::npos) << message;
  // No axes: the base config alone is the one point.
  EXPECT_EQ(sweep::BuildSweepSpace(Strings{}, base).size(), 1);
}

}  // namespace
