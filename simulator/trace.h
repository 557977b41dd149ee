// Timeline writers for the simulator (the TraceSink of simulator.h): Chrome/Perfetto trace-event
// JSON (`retarget sim --trace`) and a value-change dump (`--vcd`). docs/simulator-output.md
// describes both formats field by field.
//
// Guarantees:
//   - ChromeTraceWriter streams: every callback writes its event at once, so memory stays
//     constant however long the program is. The output is one JSON object
//     {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}} once Finish() ran;
//     before that it is an unterminated prefix (a failed run leaves no usable file, and the CLI
//     discards it). Timestamps are microseconds: cycle / clock.mhz.
//   - Tracks: one thread (tid = unit index + 1) per systolic::Unit, named by a metadata event
//     and ordered as in isa.def; instructions and stalls go on their unit's track; counters
//     ("C" events) belong to the process. Viewers require the slices of one track to nest
//     perfectly, but a unit's intervals may overlap (pipelined DMA transfers, weights loading
//     while the array computes): an interval that would not nest goes to an overlap track of its unit
//     ("mxu (overlap 1)", created on first use), so every track nests. This assumes a unit's
//     events arrive in start order, as the simulator reports them; otherwise it is best effort.
//   - VcdWriter keeps memory constant too: each unit's value changes go to their own temporary
//     file (a unit's intervals arrive in start order; different units' need not) and are
//     merged in time order by Finish(). Times are integers in the largest power-of-ten unit
//     (1 s .. 1 fs) that still gives at least 1000 units per clock period, each rounded from
//     its cycle directly (no accumulated drift). Zero-length busy intervals leave no trace in
//     the VCD; an interval starting before its unit's previous one ended is clipped to start
//     where that one ended.
//   - Write failures (disk full) are reported by ok(), never thrown from a callback; the CLI
//     checks it after the run.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/simulator.h"

namespace simulator {

class ChromeTraceWriter : public TraceSink {
 public:
  // `out` must outlive the writer. `process_name` labels the process track (e.g. the config).
  ChromeTraceWriter(std::ostream& out, double clock_mhz, std::string_view process_name);

  void Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, size_t index,
            std::string_view mnemonic) override;
  void Stall(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
             std::string_view cause) override;
  void Counter(std::string_view name, int64_t cycle, double value) override;
  void Finish(int64_t total_cycles) override;

  bool ok() const { return static_cast<bool>(out_); }

 private:
  // One track of a unit: the ends of its slices that may still contain the next one.
  struct Lane {
    bool named = false;
    int64_t last_start = 0;
    std::vector<int64_t> open_ends;  // innermost last; at most kMaxNesting
  };
  static constexpr size_t kLanesPerUnit = 4;
  static constexpr size_t kMaxNesting = 16;

  int TrackFor(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle);  // returns a tid
  void NameTrack(size_t unit, size_t lane);
  void Slice(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, std::string_view name,
             std::string_view category, nlohmann::ordered_json args);
  nlohmann::ordered_json Microseconds(int64_t cycles) const;
  void Write(const nlohmann::ordered_json& event);  // the separator, then the event

  std::ostream& out_;
  double clock_mhz_;
  std::array<std::array<Lane, kLanesPerUnit>, kUnitCount> lanes_{};
  bool finished_ = false;
};

class VcdWriter : public TraceSink {
 public:
  // `out` must outlive the writer. Throws hlo::Error if no temporary file can be created.
  VcdWriter(std::ostream& out, double clock_mhz);
  ~VcdWriter() override;
  VcdWriter(const VcdWriter&) = delete;
  VcdWriter& operator=(const VcdWriter&) = delete;

  void Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, size_t index,
            std::string_view mnemonic) override;
  void Stall(systolic::Unit, int64_t, int64_t, std::string_view) override {}  // not in the VCD
  void Counter(std::string_view, int64_t, double) override {}                 // not in the VCD
  void Finish(int64_t total_cycles) override;

  bool ok() const { return static_cast<bool>(out_) && !spill_failed_; }

  // The VCD time unit chosen for `clock_mhz` ("1 ps") and how many of them one cycle lasts.
  struct Timescale {
    std::string unit;
    double units_per_cycle = 0;
  };
  static Timescale ChooseTimescale(double clock_mhz);

 private:
  // One unit's changes in time order: `index` is the instruction now running, -1 when idle.
  struct Change {
    int64_t cycle;
    int64_t index;
  };
  struct UnitLog {
    std::FILE* file = nullptr;
    int64_t open_end = -1;  // end of the last busy interval, not yet written as "idle"
  };
  void Append(size_t unit, Change change);
  void WriteHeader();
  void MergeChanges(int64_t total_cycles);
  int64_t VcdTime(int64_t cycle) const;

  std::ostream& out_;
  Timescale timescale_;
  std::array<UnitLog, kUnitCount> logs_{};
  bool spill_failed_ = false;
  bool finished_ = false;
};

// Forwards every callback to each sink (e.g. a ChromeTraceWriter and a VcdWriter).
class FanOutSink : public TraceSink {
 public:
  explicit FanOutSink(std::vector<TraceSink*> sinks) : sinks_(std::move(sinks)) {}
  void Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, size_t index,
            std::string_view mnemonic) override;
  void Stall(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
             std::string_view cause) override;
  void Counter(std::string_view name, int64_t cycle, double value) override;
  void Finish(int64_t total_cycles) override;

 private:
  std::vector<TraceSink*> sinks_;
};

}  // namespace simulator
