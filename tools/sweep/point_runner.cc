// RunPoints and ResultTable (contract in point_runner.h).
#include "tools/sweep/point_runner.h"

#include "hlo/diagnostic.h"
#include "tools/sweep/child_processes.h"
#include "tools/sweep/sweep_point.h"

namespace sweep {
namespace {

using Fields = std::vector<std::string>;

// The last non-empty line of a child's stderr: its error message.
std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end + 1 - start);
}

// A child's result fields, or its failure as a row.
Fields ResultOf(const Outcome& outcome, double timeout, const std::string& config_text) {
  std::string error;
  if (outcome.Succeeded()) {
    try {
      const SweepTable child = ParseCsv(outcome.out, "sweep-point output");
      if (child.rows.size() == 1 && child.columns.size() == kResultColumns.size() + 1) {
        Fields fields(child.rows[0].begin() + 1, child.rows[0].end());  // after `point`
        fields[ResultColumn("config")] = config_text;
        return fields;
      }
      error = "sweep-point printed an unexpected table";
    } catch (const hlo::Error& e) {
      error = "sweep-point printed malformed CSV: " + e.message();
    }
  } else {
    error = "the point's process failed (" + outcome.Describe(timeout) + ")";
    if (std::string last = LastLine(outcome.err); !last.empty()) error += ": " + last;
  }
  return ResultFields(FailedPoint(error), config_text);
}

void PrintProgress(std::ostream* out, const std::string& step, const SweepPoint& point,
                   const Fields& result) {
  if (out == nullptr) return;
  const std::string& error = result[ResultColumn("error")];
  *out << "retarget sweep: " << step << " point " << point.index << " (" << JoinedAssignments(point)
       << "): "
       << (error.empty() ? result[ResultColumn("latency_ms")] + " ms " +
                               result[ResultColumn("latency_source")]
                         : "error: " + error)
       << "\n";
  out->flush();
}

// FILE after `--`, so a name starting with '-' is not read as a flag.
std::vector<std::string> PointCommand(const SweepPoint& point, const PointRunOptions& options,
                                      bool estimate_only) {
  std::vector<std::string> command = {options.binary, "sweep-point", "--index",
                                      std::to_string(point.index)};
  command.insert(command.end(), options.shared_flags.begin(), options.shared_flags.end());
  if (estimate_only) command.push_back("--estimate-only");
  for (const std::string& assignment : point.assignments) {
    command.push_back("--set");
    command.push_back(assignment);
  }
  command.push_back("--");
  command.push_back(options.file);
  return command;
}

}  // namespace

std::string JoinedAssignments(const SweepPoint& point) {
  std::string text;
  for (const std::string& assignment : point.assignments) {
    if (!text.empty()) text += ' ';
    text += assignment;
  }
  return text;
}

std::vector<Fields> RunPoints(const std::vector<SweepPoint>& points,
                              const PointRunOptions& options) {
  std::vector<std::vector<std::string>> commands;
  for (const SweepPoint& point : points) commands.push_back(PointCommand(point, options, false));
  std::vector<Fields> results(points.size());
  std::vector<size_t> died;  // points whose process crashed or hung
  std::vector<std::string> why(points.size());
  size_t done = 0;
  RunChildren(
      commands, options.jobs, options.timeout_seconds, [&](size_t i, const Outcome& outcome) {
        results[i] = ResultOf(outcome, options.timeout_seconds, JoinedAssignments(points[i]));
        if (!outcome.Succeeded()) {
          died.push_back(i);
          why[i] = outcome.Describe(options.timeout_seconds);
        }
        std::string step = "[";
        step += std::to_string(++done);
        step += '/';
        step += std::to_string(points.size());
        step += ']';
        PrintProgress(options.progress, step, points[i], results[i]);
      });
  if (!options.retry_estimated || died.empty()) return results;

  std::vector<std::vector<std::string>> retries;
  for (size_t i : died) retries.push_back(PointCommand(points[i], options, true));
  RunChildren(
      retries, options.jobs, options.timeout_seconds, [&](size_t r, const Outcome& outcome) {
        const size_t i = died[r];
        if (outcome.Succeeded()) {
          Fields retried = ResultOf(outcome, options.timeout_seconds, JoinedAssignments(points[i]));
          std::string& note = retried[ResultColumn("note")];
          note = "the simulating process failed (" + why[i] + "); estimated instead" +
                 (note.empty() ? "" : "; " + note);
          results[i] = std::move(retried);
        }
        PrintProgress(options.progress, "[retry, estimate only]", points[i], results[i]);
      });
  return results;
}

SweepTable ResultTable(const SweepSpace& space, const std::vector<SweepPoint>& points,
                       const std::vector<Fields>& results) {
  SweepTable table;
  table.columns = {"point"};
  for (const SweepAxis& axis : space.axes()) table.columns.push_back(axis.key);
  table.columns.insert(table.columns.end(), kResultColumns.begin(), kResultColumns.end());
  for (size_t i = 0; i < points.size(); ++i) {
    Fields row = {std::to_string(points[i].index)};
    row.insert(row.end(), points[i].values.begin(), points[i].values.end());
    row.insert(row.end(), results[i].begin(), results[i].end());
    table.rows.push_back(std::move(row));
  }
  SortByPoint(table);
  return table;
}

}  // namespace sweep
