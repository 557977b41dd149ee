// Test helper: checks the property trace viewers rely on in a Chrome/Perfetto trace -- on every
// track, "X" slices nest perfectly (each one ends before or together with any that contains it).
// Computed from the cycle args, independently of the writer's own bookkeeping. Test-only code.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/report/json_value.h"

namespace simulator_test {

// "" when every track nests, else a description of the first slice that does not.
inline std::string FirstNestingViolation(const report_test::JsonValue& trace) {
  std::map<double, std::vector<std::pair<double, double>>> slices;  // tid -> [start, end)
  for (const report_test::JsonValue& event : trace["traceEvents"].array) {
    if (event["ph"].string != "X") continue;
    const double start = event["args"]["start_cycle"].number;
    slices[event["tid"].number].emplace_back(start, start + event["args"]["cycles"].number);
  }
  for (auto& [tid, list] : slices) {
    // Outer slices first: by start, then longest first.
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open_ends;
    for (const auto& [start, end] : list) {
      while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back()) {
        return "tid " + std::to_string(tid) + ": [" + std::to_string(start) + ", " +
               std::to_string(end) + ") crosses a slice ending at " +
               std::to_string(open_ends.back());
      }
      open_ends.push_back(end);
    }
  }
  return "";
}

}  // namespace simulator_test
