// The price table: compiled-in defaults (equal to examples/prices.cfg and to the
// TargetDescriptions), the `key = value` override format with its FILE:LINE:COL errors, and the
// cost formula.
#include <gtest/gtest.h>

#include "compiler/target_description.h"
#include "hlo/diagnostic.h"
#include "tests/test_support.h"
#include "tools/report/prices.h"
#include "targets/descriptions.h"

namespace {

using report::ApplyPriceText;
using report::DefaultPrices;
using report::PriceTable;

// The hlo::Error of applying `text` as file "p.cfg", formatted "p.cfg:LINE:COL: error: ...".
std::string ErrorOf(const std::string& text) {
  PriceTable table = DefaultPrices();
  try {
    ApplyPriceText(table, text, "p.cfg");
  } catch (const hlo::Error& error) {
    const std::string formatted = hlo::FormatError(error);
    return formatted.substr(0, formatted.find('\n'));
  }
  return "no error";
}

TEST(PricesTest, DefaultsAreTheTargetDescriptionsPricesWithCitations) {
  const PriceTable table = DefaultPrices();
  EXPECT_EQ(table.size(), targets::DescriptionNames().size());
  EXPECT_EQ(*table.at("cpu").usd_per_hour, 0.1008);
  EXPECT_EQ(*table.at("gpu").usd_per_hour, 4.54);
  EXPECT_EQ(*table.at("systolic").usd_per_hour, 1.20);
  EXPECT_EQ(*table.at("interp").usd_per_hour, 0.0504);
  for (const auto& [name, price] : table) {
    EXPECT_EQ(*price.usd_per_hour, targets::FindDescription(name)->price_per_hour_usd) << name;
    EXPECT_FALSE(price.source.empty()) << name;
  }
  EXPECT_NE(table.at("cpu").source.find("aws.amazon.com/ec2/pricing"), std::string::npos);
}

TEST(PricesTest, TheExampleFileEqualsTheCompiledInDefaults) {
  const std::string path = std::string(RETARGET_DOCS_DIR) + "/../examples/prices.cfg";
  const PriceTable file = report::LoadPrices(path);
  const PriceTable defaults = DefaultPrices();
  ASSERT_EQ(file.size(), defaults.size());
  for (const auto& [name, price] : defaults) {
    EXPECT_EQ(file.at(name).usd_per_hour, price.usd_per_hour) << name;
    EXPECT_EQ(file.at(name).source, price.source) << name;
  }
}

TEST(PricesTest, AFileOverridesPerTargetAndCitesItself) {
  PriceTable table = DefaultPrices();
  ApplyPriceText(table,
                 "# reserved prices\n"
                 "  ; another comment\n"
                 "gpu.usd_per_hour = 2.5   # trailing comment\n"
                 "cpu.source = our contract; 2026 # kept verbatim\n"
                 "cpu.usd_per_hour=0\n"
                 "\n",
                 "p.cfg");
  EXPECT_EQ(*table.at("gpu").usd_per_hour, 2.5);
  EXPECT_EQ(table.at("gpu").source, "p.cfg:3");  // no source line: where it was set
  EXPECT_EQ(*table.at("cpu").usd_per_hour, 0);
  EXPECT_EQ(table.at("cpu").source, "our contract; 2026 # kept verbatim");
  EXPECT_EQ(*table.at("systolic").usd_per_hour, 1.20);  // untouched
}

TEST(PricesTest, BadLinesAreErrorsAtTheirLineAndColumn) {
  EXPECT_EQ(ErrorOf("tpu.usd_per_hour = 1\n"),
            "p.cfg:1:1: error: unknown target 'tpu' (targets: interp, cpu, gpu, systolic)");
  EXPECT_EQ(ErrorOf("\n  gpu.usd = 3\n"),
            "p.cfg:2:3: error: unknown field 'usd' in 'gpu.usd' (fields: usd_per_hour, source)");
  EXPECT_EQ(ErrorOf("gpu = 3\n"),
            "p.cfg:1:1: error: unknown field '' in 'gpu' (fields: usd_per_hour, source)");
  EXPECT_EQ(ErrorOf("gpu.usd_per_hour = cheap\n"),
            "p.cfg:1:20: error: bad value 'cheap' for 'gpu.usd_per_hour': expected a number of "
            "US dollars per hour");
  EXPECT_EQ(ErrorOf("gpu.usd_per_hour = 1.5x\n"),
            "p.cfg:1:20: error: bad value '1.5x' for 'gpu.usd_per_hour': expected a number of "
            "US dollars per hour");
  EXPECT_NE(ErrorOf("gpu.usd_per_hour = nan\n").find("1:20: error: bad value 'nan'"), std::string::npos);
  EXPECT_NE(ErrorOf("gpu.usd_per_hour =\n").find("bad value ''"), std::string::npos);
  EXPECT_EQ(ErrorOf("gpu.usd_per_hour = -1\n"),
            "p.cfg:1:20: error: value '-1' for 'gpu.usd_per_hour' is outside its range [0, 1e6] "
            "US dollars per hour");
  EXPECT_EQ(ErrorOf("cpu.usd_per_hour = 1\ncpu.usd_per_hour = 2\n"),
            "p.cfg:2:1: error: 'cpu.usd_per_hour' is set twice (first on line 1)");
  EXPECT_EQ(ErrorOf("cpu.usd_per_hour 1\n"),
            "p.cfg:1:1: error: expected 'TARGET.FIELD = VALUE' (fields: usd_per_hour, source)");
  EXPECT_EQ(ErrorOf("cpu.source =  \n"), "p.cfg:1:15: error: empty value for 'cpu.source'");
}

TEST(PricesTest, UnreadableFilesAreErrors) {
  EXPECT_THROW(report::LoadPrices("/nonexistent/prices.cfg"), hlo::Error);
  EXPECT_THROW(report::LoadPrices("/"), hlo::Error);  // a directory
}

TEST(PricesTest, CostPerMillionInferences) {
  // 2 ms at $3.60/hour: 1e6 runs take 2000 s = 5/9 hour -> $2.
  const auto cost = report::CostPerMillion(0.002, report::Price{3.60, "x"});
  ASSERT_TRUE(cost);
  EXPECT_NEAR(*cost, 2.0, 1e-12);
  EXPECT_FALSE(report::CostPerMillion(0.002, report::Price{std::nullopt, ""}));
  EXPECT_EQ(*report::CostPerMillion(0, report::Price{4.54, ""}), 0);
}

}  // namespace
