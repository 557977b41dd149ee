// The simulator's output writers on synthetic event streams (no simulation): the Chrome/Perfetto
// trace JSON (tracks, X events scaled from cycles, stalls, counters), the VCD (header and value
// changes checked byte for byte), the fan-out sink and the --stats-json document.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "simulator/sim_stats_json.h"
#include "simulator/trace.h"
#include "simulator/isa/arch_config.h"
#include "tests/simulator/trace_check.h"
#include "tests/report/json_value.h"

namespace {

using report_test::JsonValue;
using report_test::ParseJson;
using systolic::Unit;

// A strict second opinion on JSON syntax (our reader accepts some non-JSON numbers): Python's json
// module, under the build's own Python (scripts/setup-python.sh). Returns "" when valid.
std::string PythonJsonCheck(const std::string& text) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("retarget_trace_test_" + std::to_string(getpid()) + ".json");
  std::ofstream(file, std::ios::binary) << text;
  const std::string command = std::string(RETARGET_PYTHON) +
                              " -c 'import json,sys; json.load(open(sys.argv[1]))' '" +
                              file.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::filesystem::remove(file);
  return status == 0 ? "" : std::string(RETARGET_PYTHON) + " json.load rejected the document";
}

std::vector<const JsonValue*> EventsWith(const JsonValue& trace, const std::string& ph,
                                         const std::string& name = "") {
  std::vector<const JsonValue*> found;
  for (const JsonValue& event : trace["traceEvents"].array) {
    if (event["ph"].string == ph && (name.empty() || event["name"].string == name)) {
      found.push_back(&event);
    }
  }
  return found;
}

// A small timeline at 700 MHz: 70 cycles are exactly 0.1 us.
std::string SyntheticChromeTrace() {
  std::ostringstream out;
  simulator::ChromeTraceWriter writer(out, 700, "tpu-v1 \"test\"");
  writer.Busy(Unit::kLoad, 0, 70, 0, "dma.load");
  writer.Stall(Unit::kMxu, 0, 70, "semaphore");
  writer.Busy(Unit::kMxu, 70, 700, 3, "mxu.matmul");
  writer.Counter("ub_bytes_live", 70, 4096);
  writer.Counter("dram_gbps", 35, 12.5);
  writer.Busy(Unit::kStore, 700, 700, 4, "sem.signal");  // zero length is kept in JSON
  writer.Finish(1400);
  EXPECT_TRUE(writer.ok());
  return out.str();
}

TEST(ChromeTraceTest, IsValidJsonWithOneNamedTrackPerUnit) {
  const std::string text = SyntheticChromeTrace();
  EXPECT_EQ(PythonJsonCheck(text), "") << text;
  const JsonValue trace = ParseJson(text);
  std::vector<const JsonValue*> names = EventsWith(trace, "M", "thread_name");
  ASSERT_EQ(names.size(), simulator::kUnitCount);
  std::set<std::string> unit_names;
  std::set<double> tids;
  for (const JsonValue* event : names) {
    unit_names.insert(event->operator[]("args")["name"].string);
    tids.insert(event->operator[]("tid").number);
  }
  EXPECT_EQ(unit_names, (std::set<std::string>{"load", "store", "mxu", "vector", "control"}));
  EXPECT_EQ(tids.size(), simulator::kUnitCount);
  ASSERT_EQ(EventsWith(trace, "M", "process_name").size(), 1u);
  EXPECT_EQ(EventsWith(trace, "M", "process_name")[0]->operator[]("args")["name"].string,
            "tpu-v1 \"test\"");
  EXPECT_EQ(trace["displayTimeUnit"].string, "ns");
  EXPECT_EQ(trace["otherData"]["total_cycles"].number, 1400);
  EXPECT_DOUBLE_EQ(trace["otherData"]["total_us"].number, 2.0);
}

TEST(ChromeTraceTest, CompleteEventsAreCyclesScaledByTheClock) {
  const JsonValue trace = ParseJson(SyntheticChromeTrace());
  auto tid_of = [&](const std::string& unit) {
    for (const JsonValue* event : EventsWith(trace, "M", "thread_name")) {
      if ((*event)["args"]["name"].string == unit) return (*event)["tid"].number;
    }
    return -1.0;
  };
  std::vector<const JsonValue*> load = EventsWith(trace, "X", "dma.load");
  ASSERT_EQ(load.size(), 1u);
  EXPECT_EQ((*load[0])["tid"].number, tid_of("load"));
  EXPECT_EQ((*load[0])["ts"].number, 0);
  EXPECT_DOUBLE_EQ((*load[0])["dur"].number, 0.1);  // 70 cycles / 700 MHz
  EXPECT_EQ((*load[0])["args"]["index"].number, 0);
  EXPECT_EQ((*load[0])["args"]["mnemonic"].string, "dma.load");

  std::vector<const JsonValue*> matmul = EventsWith(trace, "X", "mxu.matmul");
  ASSERT_EQ(matmul.size(), 1u);
  EXPECT_EQ((*matmul[0])["tid"].number, tid_of("mxu"));
  EXPECT_DOUBLE_EQ((*matmul[0])["ts"].number, 0.1);
  EXPECT_DOUBLE_EQ((*matmul[0])["dur"].number, 0.9);  // 630 cycles
  EXPECT_EQ((*matmul[0])["args"]["index"].number, 3);
  EXPECT_EQ((*matmul[0])["args"]["cycles"].number, 630);

  std::vector<const JsonValue*> stall = EventsWith(trace, "X", "stall: semaphore");
  ASSERT_EQ(stall.size(), 1u);
  EXPECT_EQ((*stall[0])["tid"].number, tid_of("mxu"));  // on the stalled unit's own track
  EXPECT_EQ((*stall[0])["cat"].string, "stall");
  EXPECT_EQ((*stall[0])["args"]["cause"].string, "semaphore");
  EXPECT_DOUBLE_EQ((*stall[0])["dur"].number, 0.1);

  std::vector<const JsonValue*> signal = EventsWith(trace, "X", "sem.signal");
  ASSERT_EQ(signal.size(), 1u);
  EXPECT_DOUBLE_EQ((*signal[0])["ts"].number, 1.0);
  EXPECT_EQ((*signal[0])["dur"].number, 0);
}

TEST(ChromeTraceTest, CountersCarryTheirValue) {
  const JsonValue trace = ParseJson(SyntheticChromeTrace());
  std::vector<const JsonValue*> ub = EventsWith(trace, "C", "ub_bytes_live");
  ASSERT_EQ(ub.size(), 1u);
  EXPECT_DOUBLE_EQ((*ub[0])["ts"].number, 0.1);
  EXPECT_EQ((*ub[0])["args"]["value"].number, 4096);
  std::vector<const JsonValue*> dram = EventsWith(trace, "C", "dram_gbps");
  ASSERT_EQ(dram.size(), 1u);
  EXPECT_DOUBLE_EQ((*dram[0])["ts"].number, 0.05);
  EXPECT_EQ((*dram[0])["args"]["value"].number, 12.5);
}

TEST(ChromeTraceTest, StreamsEachEventBeforeTheRunEnds) {
  std::ostringstream out;
  simulator::ChromeTraceWriter writer(out, 1000, "p");
  writer.Busy(Unit::kVector, 5, 9, 7, "vexp");
  EXPECT_NE(out.str().find("\"vexp\""), std::string::npos);  // written now, not buffered
  EXPECT_EQ(out.str().find("otherData"), std::string::npos);
  writer.Finish(9);
  writer.Finish(9);                            // idempotent: the document is closed once
  writer.Busy(Unit::kVector, 9, 10, 8, "vmul");  // late events cannot corrupt it
  EXPECT_NO_THROW(ParseJson(out.str())) << out.str();
  EXPECT_EQ(out.str().find("vmul"), std::string::npos);
}

// Viewers need the slices of one track to nest; an overlapping one moves to an overlap track.
TEST(ChromeTraceTest, OverlappingSlicesGoToAnOverlapTrackSoEveryTrackNests) {
  std::ostringstream out;
  simulator::ChromeTraceWriter writer(out, 1000, "p");
  writer.Busy(Unit::kMxu, 100, 500, 5, "mxu.matmul");
  writer.Stall(Unit::kMxu, 100, 500, "weights");      // equal: nests inside the matmul
  writer.Busy(Unit::kMxu, 200, 300, 6, "sem.signal");  // inside: nests
  writer.Busy(Unit::kMxu, 450, 550, 7, "mxu.ldw");     // crosses the matmul's end: overlap track
  writer.Busy(Unit::kMxu, 460, 470, 8, "nop");         // inside the matmul: the unit track
  writer.Busy(Unit::kMxu, 600, 700, 9, "mxu.matmul");  // after everything: back on the unit track
  writer.Finish(700);
  const JsonValue trace = ParseJson(out.str());
  std::map<std::string, double> tid_of;
  for (const JsonValue* event : EventsWith(trace, "M", "thread_name")) {
    tid_of[(*event)["args"]["name"].string] = (*event)["tid"].number;
  }
  ASSERT_EQ(tid_of.size(), simulator::kUnitCount + 1);
  ASSERT_EQ(tid_of.count("mxu (overlap 1)"), 1u);
  std::map<double, double> tid_by_index;  // instruction index -> track
  for (const JsonValue* event : EventsWith(trace, "X")) {
    if ((*event)["cat"].string == "instruction") {
      tid_by_index[(*event)["args"]["index"].number] = (*event)["tid"].number;
    } else {
      EXPECT_EQ((*event)["tid"].number, tid_of["mxu"]);  // the stall stays on the unit track
    }
  }
  EXPECT_EQ(tid_by_index[5], tid_of["mxu"]);
  EXPECT_EQ(tid_by_index[6], tid_of["mxu"]);
  EXPECT_EQ(tid_by_index[7], tid_of["mxu (overlap 1)"]);
  EXPECT_EQ(tid_by_index[8], tid_of["mxu"]);
  EXPECT_EQ(tid_by_index[9], tid_of["mxu"]);
  EXPECT_EQ(simulator_test::FirstNestingViolation(trace), "");
}

TEST(VcdTest, TimescaleFollowsTheClock) {
  using Timescale = simulator::VcdWriter::Timescale;
  auto check = [](double mhz, const std::string& unit, double units_per_cycle) {
    Timescale t = simulator::VcdWriter::ChooseTimescale(mhz);
    EXPECT_EQ(t.unit, unit) << mhz << " MHz";
    EXPECT_DOUBLE_EQ(t.units_per_cycle, units_per_cycle) << mhz << " MHz";
  };
  check(700, "1 ps", 1e6 / 700);  // a 1428.57 ps period
  check(1000, "1 ps", 1000);
  check(2000, "100 fs", 5000);
  check(1, "1 ns", 1000);         // 1 us period
  check(100000, "10 fs", 1000);   // 10 ps period, the fastest clock a config allows
}

constexpr const char* kVcdHeader =
    "$version retarget sim $end\n"
    "$comment one clock cycle = 1428.5714285714287 time units $end\n"
    "$timescale 1 ps $end\n"
    "$scope module accelerator $end\n"
    "$var wire 1 ! load_busy $end\n$var integer 32 \" load_instruction $end\n"
    "$var wire 1 # store_busy $end\n$var integer 32 $ store_instruction $end\n"
    "$var wire 1 % mxu_busy $end\n$var integer 32 & mxu_instruction $end\n"
    "$var wire 1 ' vector_busy $end\n$var integer 32 ( vector_instruction $end\n"
    "$var wire 1 ) control_busy $end\n$var integer 32 * control_instruction $end\n"
    "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n"
    "0!\nbx \"\n0#\nbx $\n0%\nbx &\n0'\nbx (\n0)\nbx *\n$end\n";

TEST(VcdTest, HeaderAndValueChangesInTimeOrder) {
  std::ostringstream out;
  {
    simulator::VcdWriter vcd(out, 700);
    vcd.Busy(Unit::kLoad, 0, 10, 0, "dma.load");
    vcd.Busy(Unit::kLoad, 10, 20, 2, "dma.load");   // back to back: the wire stays high
    vcd.Busy(Unit::kMxu, 5, 15, 1, "mxu.matmul");   // reported late, starts earlier
    vcd.Busy(Unit::kLoad, 30, 30, 3, "sem.signal");  // zero length: invisible
    vcd.Stall(Unit::kLoad, 20, 30, "dram");          // stalls are not in the VCD
    vcd.Finish(40);
    EXPECT_TRUE(vcd.ok());
  }
  // Cycle c is at round(c * 1428.571...) ps: 5 -> 7143, 10 -> 14286, 15 -> 21429,
  // 20 -> 28571, 40 -> 57143.
  EXPECT_EQ(out.str(), std::string(kVcdHeader) +
                           "1!\nb0 \"\n"
                           "#7143\n1%\nb1 &\n"
                           "#14286\nb10 \"\n"
                           "#21429\n0%\nbx &\n"
                           "#28571\n0!\nbx \"\n"
                           "#57143\n");
}

TEST(VcdTest, OverlappingIntervalIsClippedAndEmptyRunHasOnlyTheHeader) {
  std::ostringstream out;
  {
    simulator::VcdWriter vcd(out, 1000);  // 1000 ps per cycle
    vcd.Busy(Unit::kVector, 0, 10, 0, "vadd");
    vcd.Busy(Unit::kVector, 5, 12, 1, "vmul");  // overlaps: starts where vadd ended
    vcd.Finish(12);
  }
  const std::string text = out.str();
  const std::string changes = text.substr(text.find("$end\n", text.find("$dumpvars")) + 5);
  EXPECT_EQ(changes, "1'\nb0 (\n#10000\nb1 (\n#12000\n0'\nbx (\n");

  std::ostringstream empty;
  {
    simulator::VcdWriter vcd(empty, 1000);
    vcd.Finish(0);
  }
  const std::string header_only = empty.str();
  // Nothing after the initial values: no change, and no end time beyond #0.
  EXPECT_EQ(header_only.find("$end\n", header_only.find("$dumpvars")) + 5, header_only.size());
}

TEST(FanOutTest, EverySinkSeesEveryEvent) {
  std::ostringstream json, vcd_text;
  simulator::ChromeTraceWriter chrome(json, 1000, "p");
  simulator::VcdWriter vcd(vcd_text, 1000);
  simulator::FanOutSink both({&chrome, &vcd});
  both.Busy(Unit::kControl, 0, 2, 0, "cfg.set");
  both.Stall(Unit::kStore, 0, 1, "semaphore");
  both.Counter("acc_bytes_live", 1, 64);
  both.Finish(2);
  const JsonValue trace = ParseJson(json.str());
  EXPECT_EQ(EventsWith(trace, "X", "cfg.set").size(), 1u);
  EXPECT_EQ(EventsWith(trace, "X", "stall: semaphore").size(), 1u);
  EXPECT_EQ(EventsWith(trace, "C", "acc_bytes_live").size(), 1u);
  EXPECT_NE(vcd_text.str().find("$end\n1)\nb0 *\n#2000\n0)\nbx *\n"), std::string::npos)
      << vcd_text.str();
}

simulator::SimStats SyntheticStats() {
  simulator::SimStats stats;
  stats.cycles = 1000;
  stats.clock_mhz = 1000;
  stats.seconds = 1e-6;
  auto& load = stats.units[static_cast<size_t>(Unit::kLoad)];
  load.instructions = 3;
  load.busy_cycles = 250;
  load.stall_cycles = {{"dram", 20}, {"semaphore", 10}};
  auto& mxu = stats.units[static_cast<size_t>(Unit::kMxu)];
  mxu.instructions = 2;
  mxu.busy_cycles = 600;
  mxu.stall_cycles = {{"weights", 50}};
  stats.macs = 64000;
  stats.mac_utilization = 0.25;  // 64000 / (1000 * 16 * 16)
  stats.vector_element_ops = 12;
  stats.dram_bytes_read = 4096;
  stats.dram_bytes_written = 1024;
  stats.ub_bytes_read = 300;
  stats.ub_bytes_written = 4096;
  stats.acc_bytes_read = 1024;
  stats.acc_bytes_written = 2048;
  stats.ub_peak_bytes_live = 777;
  stats.acc_peak_bytes_live = -1;  // not tracked
  stats.energy_pj = {{"mac", 10.5}, {"dram", 100}};
  return stats;
}

TEST(SimStatsJsonTest, KeysAndValues) {
  const systolic::ArchConfig config = systolic::Preset("gemmini");
  const std::string text = simulator::SimStatsJson(SyntheticStats(), config, "tile.sasm");
  EXPECT_EQ(PythonJsonCheck(text), "") << text;
  const JsonValue stats = ParseJson(text);
  EXPECT_EQ(stats.Keys(),
            (std::vector<std::string>{"format", "version", "program", "config", "cycles",
                                      "clock_mhz", "seconds", "instructions", "macs",
                                      "peak_macs_per_cycle", "mac_utilization", "ops_per_second",
                                      "vector_element_ops", "units", "bytes", "peak_bytes_live",
                                      "energy_pj"}));
  EXPECT_EQ(stats["peak_bytes_live"]["ub"].number, 777);
  EXPECT_EQ(stats["peak_bytes_live"]["acc"].number, -1);
  EXPECT_EQ(stats["format"].string, "retarget-sim-stats");
  EXPECT_EQ(stats["program"].string, "tile.sasm");
  EXPECT_EQ(stats["config"]["name"].string, "gemmini");
  EXPECT_EQ(stats["config"]["array.rows"].number, 16);
  EXPECT_EQ(stats["config"]["array.dataflow"].string, "ws");
  EXPECT_EQ(stats["config"]["ub.bytes"].number, 262144);
  EXPECT_EQ(stats["config"].Keys().size(), systolic::ArchKeys().size());
  EXPECT_EQ(stats["cycles"].number, 1000);
  EXPECT_EQ(stats["instructions"].number, 5);
  EXPECT_EQ(stats["peak_macs_per_cycle"].number, 256);
  EXPECT_EQ(stats["mac_utilization"].number, 0.25);
  EXPECT_DOUBLE_EQ(stats["ops_per_second"].number, 1.28e11);  // 2 * 64000 ops in 1 us

  const JsonValue& units = stats["units"];
  EXPECT_EQ(units.Keys(), (std::vector<std::string>{"load", "store", "mxu", "vector", "control"}));
  EXPECT_EQ(units["mxu"]["utilization"].number, 0.6);
  EXPECT_EQ(units["load"]["utilization"].number, 0.25);
  EXPECT_EQ(units["load"]["stall_cycles_total"].number, 30);
  EXPECT_EQ(units["load"]["stall_cycles"]["dram"].number, 20);
  EXPECT_EQ(units["store"]["stall_cycles"].Keys().size(), 0u);
  EXPECT_EQ(units["store"]["utilization"].number, 0);

  EXPECT_EQ(stats["bytes"].Keys(), (std::vector<std::string>{"dram_read", "dram_written",
                                                             "ub_read", "ub_written", "acc_read",
                                                             "acc_written"}));
  EXPECT_EQ(stats["bytes"]["ub_written"].number, 4096);
  EXPECT_EQ(stats["energy_pj"]["mac"].number, 10.5);
  EXPECT_EQ(stats["energy_pj"]["total"].number, 110.5);
}

TEST(SimStatsJsonTest, ZeroCyclesGiveZeroRatiosNotNaN) {
  simulator::SimStats empty;
  const std::string text = simulator::SimStatsJson(empty, systolic::Preset("tpu-v1"), "x.bin");
  const JsonValue stats = ParseJson(text);
  EXPECT_EQ(stats["units"]["mxu"]["utilization"].kind, JsonValue::Kind::kNumber);
  EXPECT_EQ(stats["units"]["mxu"]["utilization"].number, 0);
  EXPECT_EQ(stats["ops_per_second"].number, 0);
  EXPECT_EQ(stats["energy_pj"]["total"].number, 0);
}

TEST(SimStatsSummaryTest, NamesTheHeadlineFigures) {
  const std::string summary =
      simulator::SimStatsSummary(SyntheticStats(), systolic::Preset("gemmini"));
  EXPECT_NE(summary.find("cycles: 1000 (1.000 us at 1000 MHz, config gemmini, 16x16 ws)"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("MAC utilization: 25.00 % (64000 MACs"), std::string::npos) << summary;
  EXPECT_NE(summary.find("load 25.00 %"), std::string::npos) << summary;
  EXPECT_NE(summary.find("mxu 60.00 %"), std::string::npos) << summary;
  EXPECT_NE(summary.find("load dram 20, load semaphore 10, mxu weights 50"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("dram read 4096 written 1024"), std::string::npos) << summary;
  EXPECT_NE(summary.find("peak live bytes: ub 777, acc not tracked\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("energy: 110.5 pJ (dram 100.0, mac 10.5)"), std::string::npos)
      << summary;
}

}  // namespace
