// `retarget sweep-merge PART.csv... [--csv OUT] [--html OUT] [--force]`: joins the partial CSVs
// of a sweep run as cluster tasks (`retarget sweep --manifest`, one part per point) into one
// table sorted by point (sweep::MergeTables: same columns in any order; a point given twice is
// kept once when both agree or one of them failed; conflicting results are an error).
//
// Guarantees: every input is read and checked before anything is written; a missing or
// malformed part is an error naming it; an output is kept unless --force and never replaces a
// part. Exit status 1 when the merged table has failed points (after writing it), or when the
// parts do not cover every point 0..max (the missing points are listed).
#include <filesystem>
#include <iostream>

#include "tools/report/report_html.h"
#include "tools/retarget/cmd_sweep.h"
#include "tools/sweep/sweep_csv.h"
#include "tools/sweep/sweep_html.h"

namespace cli {

CommandSpec SweepMergeSpec() {
  CommandSpec spec;
  spec.name = "sweep-merge";
  spec.arguments = "PART.csv...";
  spec.summary = "merge the partial CSVs of a sweep run on a cluster";
  spec.details =
      "Reads every PART (the CSVs that 'retarget sweep ... --point K --csv PART' writes, e.g.\n"
      "from the job lists of 'retarget sweep --manifest DIR') and writes one table sorted by\n"
      "point. Parts may order their columns differently but must have the same columns. A\n"
      "point present twice is kept once if both rows agree, or the row without an error wins;\n"
      "two different results for one point are an error. Guide: docs/sweep.md.\n"
      "\nexamples:\n"
      "  retarget sweep-merge cluster/parts/point-*.csv --csv sweep.csv --html sweep.html\n";
  spec.min_positional = 1;
  spec.max_positional = -1;
  spec.flags = {
      {"--csv", "OUT", "write the merged table to OUT (default: stdout)", ""},
      {"--html", "OUT", "write a self-contained HTML page plotting it", ""},
      {"--force", "", "replace outputs that exist (never a PART)", ""},
  };
  return spec;
}

int RunSweepMerge(const ParsedArgs& args, const Context&) {
  const std::optional<std::string> csv = args.Get("--csv"), html = args.Get("--html");
  if (csv && html && *csv == *html) throw UsageError("--csv and --html name the same file");
  const bool force = args.Has("--force");
  for (const auto& out : {csv, html}) {
    if (!out) continue;
    RefuseToOverwriteInputs(*out, args.positional);
    std::error_code ec;
    if (!force && std::filesystem::exists(*out, ec)) {
      throw hlo::Error(*out + ": already exists (use --force to overwrite)");
    }
  }
  std::string chart_js;
  if (html) chart_js = report::ReadChartJs(report::kDebianChartJs);

  std::vector<sweep::SweepTable> parts;
  for (const std::string& path : args.positional) parts.push_back(sweep::ReadCsvFile(path));
  const sweep::SweepTable merged = sweep::MergeTables(parts, args.positional);

  // Points 0..max that no part holds: a task that never ran or wrote nothing.
  std::string missing;
  int64_t expected = 0, missing_count = 0;
  for (const auto& row : merged.rows) {
    for (int64_t p = expected; p < sweep::RowPoint(merged, row); ++p, ++missing_count) {
      if (missing_count < 20) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
    }
    expected = sweep::RowPoint(merged, row) + 1;
  }
  bool failed = false;
  const int error_column = merged.ColumnIndex("error");
  for (const auto& row : merged.rows) {
    failed = failed || (error_column >= 0 && !row[static_cast<size_t>(error_column)].empty());
  }

  if (csv) {
    WriteOutputFile(*csv, sweep::WriteCsv(merged), force, args.positional);
    std::cout << "wrote " << *csv << " (" << merged.rows.size() << " points from " << parts.size()
              << " files)\n";
  } else {
    std::cout << sweep::WriteCsv(merged);
  }
  if (html) {
    WriteOutputFile(*html, sweep::SweepToHtml(merged, "merged sweep", chart_js), force,
                    args.positional);
    std::cout << "wrote " << *html << "\n";
  }
  if (missing_count > 0) {
    std::cerr << "retarget sweep-merge: error: " << missing_count << " points missing (" << missing
              << (missing_count > 20 ? ", ..." : "") << ")\n";
    return kExitFailure;
  }
  if (failed) {
    std::cerr << "retarget sweep-merge: error: some points failed (see their error column)\n";
    return kExitFailure;
  }
  return std::cout.flush() ? kExitOk : kExitFailure;
}

}  // namespace cli
