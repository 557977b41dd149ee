// The sweep's result table and its CSV form: written by `retarget sweep --csv`, read back and
// merged by `retarget sweep-merge` (the partial CSVs of a sweep split across cluster tasks).
//
// Format (docs/sweep.md): RFC 4180 CSV, one header line, LF line ends. Columns: `point` (the
// index in the cross product), one column per swept key as typed, then kResultColumns. A field
// is quoted when it holds a comma, a quote or a line break (quotes doubled).
//
// Guarantees:
//   * ParseCsv(WriteCsv(t)) == t for every table whose rows have as many fields as columns.
//   * Malformed input is an hlo::Error at FILE:LINE:COL: an unterminated quote, a row with the
//     wrong number of fields, no `point` column, a point that is not a whole number >= 0, a
//     repeated column name. Files over kMaxCsvFileBytes are refused before they are read.
//   * MergeTables accepts the same columns in any order (the result takes the first file's
//     order) and sorts rows by point. A point given twice is kept once when both rows agree, the
//     row without an error wins over a failed one (a retried task), and two different results
//     for one point are an error naming both files.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sweep {

inline constexpr int64_t kMaxCsvFileBytes = int64_t{256} << 20;

// The figures of a point, after the swept keys, in column order.
inline constexpr std::array<std::string_view, 10> kResultColumns = {
    "config",               // the point's full-key assignments, space-separated
    "latency_ms",           // one inference
    "latency_source",       // "simulated" or "estimated"
    "utilization",          // share of the array's peak MAC rate over the run, 0..1
    "host_fallback_share",  // share of the time spent on the host (source: latency_source)
    "energy_mj",            // one inference
    "energy_source",        // "simulated" or "estimated"
    "cost_per_1m_usd",      // one million inferences at the target's price
    "error",                // empty, or why the point has no figures
    "note",                 // why a figure is estimated although the simulator is present
};

// The index of `name` in kResultColumns (a compile-time error when it is not one of them).
consteval size_t ResultColumn(std::string_view name) {
  for (size_t i = 0; i < kResultColumns.size(); ++i) {
    if (kResultColumns[i] == name) return i;
  }
  throw "not a result column";
}

struct SweepTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as many fields as columns
  bool operator==(const SweepTable&) const = default;

  // Index of `name` in columns, or -1.
  int ColumnIndex(std::string_view name) const;
};

std::string WriteCsv(const SweepTable& table);
// `filename` names the input in errors.
SweepTable ParseCsv(std::string_view text, const std::string& filename);
// ParseCsv of the file at `path` (hlo::Error when it is missing, unreadable or too large).
SweepTable ReadCsvFile(const std::string& path);

// The point index of `row` (its `point` field, already validated by ParseCsv).
int64_t RowPoint(const SweepTable& table, const std::vector<std::string>& row);
// Rows sorted by point.
void SortByPoint(SweepTable& table);

// `tables[i]` was read from `names[i]` (for messages).
SweepTable MergeTables(const std::vector<SweepTable>& tables,
                       const std::vector<std::string>& names);

}  // namespace sweep
