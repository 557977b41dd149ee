// ChromeTraceWriter and FanOutSink (trace.h); the VCD writer is in vcd_writer.cc. Trace events
// are nlohmann-json objects, each written on its own line as the simulation produces it.
#include "simulator/trace.h"

#include "hlo/json_text.h"

namespace simulator {
namespace {

using Json = nlohmann::ordered_json;

// Every event belongs to one process; units are its threads.
constexpr int kPid = 1;

// Lane 0 of unit u is tid u + 1 (so the unit tracks are 1..kUnitCount); overlap lane k > 0
// follows all of them. Sort indices keep each unit's overlap lanes right under it.
int LaneTid(size_t unit, size_t lane) { return static_cast<int>(1 + unit + lane * kUnitCount); }
int LaneSortIndex(size_t unit, size_t lane) { return static_cast<int>(10 * (unit + 1) + lane); }

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, double clock_mhz,
                                     std::string_view process_name)
    : out_(out), clock_mhz_(clock_mhz) {
  // The document is streamed, one event a line, so a long simulation never holds its trace.
  out_ << "{\"traceEvents\":[\n";
  out_ << hlo::JsonText({{"name", "process_name"},
                         {"ph", "M"},
                         {"pid", kPid},
                         {"args", {{"name", std::string(process_name)}}}},
                        -1);
  for (size_t u = 0; u < kUnitCount; ++u) NameTrack(u, 0);
}

void ChromeTraceWriter::NameTrack(size_t unit, size_t lane) {
  lanes_[unit][lane].named = true;
  std::string name(systolic::UnitName(static_cast<systolic::Unit>(unit)));
  if (lane > 0) name += " (overlap " + std::to_string(lane) + ")";
  const int tid = LaneTid(unit, lane);
  Write({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid},
         {"args", {{"name", name}}}});
  Write({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid},
         {"args", {{"sort_index", LaneSortIndex(unit, lane)}}}});
}

void ChromeTraceWriter::Write(const Json& event) {
  out_ << ",\n" << hlo::JsonText(event, -1);
}

Json ChromeTraceWriter::Microseconds(int64_t cycles) const {
  // clock.mhz cycles per microsecond, written as the shortest exact decimal.
  return hlo::JsonNumberValue(static_cast<double>(cycles) / clock_mhz_);
}

int ChromeTraceWriter::TrackFor(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle) {
  const auto u = static_cast<size_t>(unit);
  for (size_t lane = 0; lane < kLanesPerUnit; ++lane) {
    Lane& track = lanes_[u][lane];
    if (start_cycle < track.last_start) continue;  // out of start order: nesting unknowable
    // Slices that ended by now cannot contain this one or any later one (starts only grow).
    while (!track.open_ends.empty() && track.open_ends.back() <= start_cycle) {
      track.open_ends.pop_back();
    }
    // Too deep to track is treated as not nesting (rare: only zero-length pile-ups get there).
    const bool nests = track.open_ends.size() < kMaxNesting &&
                       (track.open_ends.empty() || end_cycle <= track.open_ends.back());
    const bool last_resort = lane + 1 == kLanesPerUnit;
    if (!nests && !last_resort) continue;
    if (!track.named) NameTrack(u, lane);
    track.last_start = start_cycle;
    if (nests) track.open_ends.push_back(end_cycle);
    return LaneTid(u, lane);
  }
  return LaneTid(u, 0);  // unreachable: the last lane always takes the slice
}

void ChromeTraceWriter::Slice(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
                              std::string_view name, std::string_view category, Json args) {
  // After Finish the document is complete: nothing may follow it.
  if (finished_ || static_cast<size_t>(unit) >= kUnitCount) return;
  if (end_cycle < start_cycle) end_cycle = start_cycle;
  const int tid = TrackFor(unit, start_cycle, end_cycle);
  args["start_cycle"] = start_cycle;
  args["cycles"] = end_cycle - start_cycle;
  Write({{"name", std::string(name)},
         {"cat", std::string(category)},
         {"ph", "X"},
         {"pid", kPid},
         {"tid", tid},
         {"ts", Microseconds(start_cycle)},
         {"dur", Microseconds(end_cycle - start_cycle)},
         {"args", std::move(args)}});
}

void ChromeTraceWriter::Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
                             size_t index, std::string_view mnemonic) {
  Slice(unit, start_cycle, end_cycle, mnemonic, "instruction",
        {{"index", index}, {"mnemonic", std::string(mnemonic)}});
}

void ChromeTraceWriter::Stall(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
                              std::string_view cause) {
  Slice(unit, start_cycle, end_cycle, "stall: " + std::string(cause), "stall",
        {{"cause", std::string(cause)}});
}

void ChromeTraceWriter::Counter(std::string_view name, int64_t cycle, double value) {
  if (finished_) return;
  Write({{"name", std::string(name)},
         {"ph", "C"},
         {"pid", kPid},
         {"ts", Microseconds(cycle)},
         {"args", {{"value", hlo::JsonNumberValue(value)}}}});
}

void ChromeTraceWriter::Finish(int64_t total_cycles) {
  if (finished_) return;  // the document is closed once; a second call would corrupt it
  finished_ = true;
  const Json other = {{"clock_mhz", hlo::JsonNumberValue(clock_mhz_)},
                      {"total_cycles", total_cycles},
                      {"total_us", Microseconds(total_cycles)}};
  out_ << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":" << hlo::JsonText(other, -1) << "}\n";
  out_.flush();
}

void FanOutSink::Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, size_t index,
                      std::string_view mnemonic) {
  for (TraceSink* sink : sinks_) sink->Busy(unit, start_cycle, end_cycle, index, mnemonic);
}
void FanOutSink::Stall(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
                       std::string_view cause) {
  for (TraceSink* sink : sinks_) sink->Stall(unit, start_cycle, end_cycle, cause);
}
void FanOutSink::Counter(std::string_view name, int64_t cycle, double value) {
  for (TraceSink* sink : sinks_) sink->Counter(name, cycle, value);
}
void FanOutSink::Finish(int64_t total_cycles) {
  for (TraceSink* sink : sinks_) sink->Finish(total_cycles);
}

}  // namespace simulator
