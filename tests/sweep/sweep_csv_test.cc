// The sweep's CSV: quoting and the round trip, parse errors with their location, reading files,
// and merging the partial CSVs of a cluster run (column order, duplicates, retried tasks,
// conflicts, missing files).
#include "tools/sweep/sweep_csv.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hlo/diagnostic.h"

namespace {

using sweep::SweepTable;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const hlo::Error& e) {
    const hlo::SourceLocation& at = e.location();
    if (!at.file) return e.message();
    return *at.file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
           e.message();
  }
  return "(no error)";
}

SweepTable Table(std::vector<std::string> columns, std::vector<std::vector<std::string>> rows) {
  return SweepTable{std::move(columns), std::move(rows)};
}

TEST(SweepCsvTest, QuotesOnlyWhatNeedsIt) {
  const SweepTable table = Table(
      {"point", "array", "error"},
      {{"0", "16x16", ""}, {"1", "32x32", "a, b"}, {"2", "64x64", "said \"no\"\nthen stopped"}});
  const std::string text = sweep::WriteCsv(table);
  EXPECT_EQ(text,
            "point,array,error\n"
            "0,16x16,\n"
            "1,32x32,\"a, b\"\n"
            "2,64x64,\"said \"\"no\"\"\nthen stopped\"\n");
  EXPECT_EQ(sweep::ParseCsv(text, "t.csv"), table);
  // CRLF line ends and a trailing blank line read the same.
  EXPECT_EQ(sweep::ParseCsv("point,array,error\r\n0,16x16,\r\n\r\n", "t.csv"),
            Table({"point", "array", "error"}, {{"0", "16x16", ""}}));
}

TEST(SweepCsvTest, MalformedFilesAreErrorsAtTheirLocation) {
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("point,a\n0,\"open\n", "p.csv"); }),
            "p.csv:2:3: unterminated quoted field");
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("point,a\n0,1\n1,2,3\n", "p.csv"); }),
            "p.csv:3:1: expected 2 fields (as the header), got 3");
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("index,a\n0,1\n", "p.csv"); }),
            "p.csv:1:1: no 'point' column");
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("point,a\n-1,1\n", "p.csv"); }),
            "p.csv:2:1: point '-1' is not a whole number >= 0");
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("point,a,a\n", "p.csv"); }),
            "p.csv:1:1: column 'a' appears twice");
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("", "p.csv"); }),
            "p.csv:1:1: empty file: expected a header line");
  EXPECT_EQ(ErrorOf([] { sweep::ParseCsv("point,a\n0,\"x\"y\n", "p.csv"); }),
            "p.csv:2:6: expected ',' or the end of the line after a quoted field");
  EXPECT_EQ(ErrorOf([] { sweep::ReadCsvFile("/nonexistent/part.csv"); }),
            "/nonexistent/part.csv: no such file (or not a regular "
            "file)");
}

TEST(SweepCsvTest, MergeReordersColumnsAndSortsByPoint) {
  const SweepTable a = Table({"point", "array", "latency_ms", "error"},
                             {{"2", "64x64", "1.5", ""}, {"0", "16x16", "9", ""}});
  const SweepTable b = Table({"latency_ms", "error", "point", "array"}, {{"4", "", "1", "32x32"}});
  const SweepTable merged = sweep::MergeTables({a, b}, {"a.csv", "b.csv"});
  EXPECT_EQ(merged,
            Table({"point", "array", "latency_ms", "error"},
                  {{"0", "16x16", "9", ""}, {"1", "32x32", "4", ""}, {"2", "64x64", "1.5", ""}}));
}

TEST(SweepCsvTest, MergeKeepsAgreeingDuplicatesOnceAndPrefersTheRetriedSuccess) {
  const SweepTable first =
      Table({"point", "latency_ms", "error"}, {{"0", "1", ""}, {"1", "", "timed out after 600 s"}});
  const SweepTable retry =
      Table({"point", "latency_ms", "error"}, {{"0", "1", ""}, {"1", "2", ""}});
  const SweepTable expected =
      Table({"point", "latency_ms", "error"}, {{"0", "1", ""}, {"1", "2", ""}});
  EXPECT_EQ(sweep::MergeTables({first, retry}, {"x.csv", "y.csv"}), expected);
  EXPECT_EQ(sweep::MergeTables({retry, first}, {"y.csv", "x.csv"}), expected);
}

TEST(SweepCsvTest, MergeRefusesConflictsAndForeignColumns) {
  const SweepTable a = Table({"point", "latency_ms", "error"}, {{"0", "1", ""}});
  const SweepTable b = Table({"point", "latency_ms", "error"}, {{"0", "3", ""}});
  EXPECT_EQ(ErrorOf([&] {
              sweep::MergeTables({a, b}, {"a.csv", "b.csv"});
            }),
            "b.csv: point 0 has a different result in a.csv");
  const SweepTable other = Table({"point", "latency_ms", "clock_mhz"}, {{"0", "1", "700"}});
  EXPECT_EQ(ErrorOf([&] {
              sweep::MergeTables({a, other}, {"a.csv", "c.csv"});
            }),
            "c.csv: its columns differ from a.csv's (missing: error; extra: "
            "clock_mhz): not parts of the same sweep");
  EXPECT_NE(ErrorOf([] { sweep::MergeTables({}, {}); }).find("no input files"), std::string::npos);
}

TEST(SweepCsvTest, ReadsFilesItWrote) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("sweep_csv_test_" + std::to_string(getpid()) + ".csv"))
                               .string();
  const SweepTable table = Table({"point", "x"}, {{"0", "a,b"}});
  std::ofstream(path, std::ios::binary) << sweep::WriteCsv(table);
  EXPECT_EQ(sweep::ReadCsvFile(path), table);
  std::filesystem::remove(path);
}

}  // namespace
