// Helpers for the SystemC model's tests: the reference configuration with its rates spelled out
// (so every expected cycle count in the tests can be derived by hand from these numbers), a
// runner for .sasm text, and a TraceSink that records events.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/simulator.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/assembler.h"

namespace simulator::testing_util {

// Gemmini: 16x16 array at 1 GHz; DRAM 16 GB/s = 16 B/cycle, 100 ns = 100 cycles, 64 B bursts;
// UB ports 4 banks x 1 port x 16 B = 64 B/cycle; accumulator ports 2 banks x 16 cols x 4 B =
// 128 B/cycle; 16 vector lanes.
inline systolic::ArchConfig TestConfig() {
  systolic::ArchConfig config = systolic::Preset("gemmini");
  EXPECT_EQ(config.clock_mhz, 1000);
  EXPECT_EQ(config.dram_bandwidth_gbps, 16);
  EXPECT_EQ(config.dram_latency_ns, 100);
  EXPECT_EQ(config.dram_burst_bytes, 64);
  EXPECT_EQ(config.ub_banks * config.ub_ports * config.ub_bank_width_bytes, 64);
  EXPECT_EQ(config.acc_banks * config.array_cols * 4, 128);
  return config;
}

inline SimStats RunSasm(const std::string& text, const systolic::ArchConfig& config,
                        Memories& memories, const SimOptions& options = {}) {
  return Simulate(systolic::Assemble(text, "test.sasm"), config, memories, options);
}

// The error message of a run expected to fail ("" if it did not).
inline std::string RunError(const std::string& text, const systolic::ArchConfig& config,
                            const SimOptions& options = {}) {
  Memories memories(config);
  try {
    RunSasm(text, config, memories, options);
  } catch (const hlo::Error& e) {
    return e.message();
  }
  return "";
}

class RecordingSink : public TraceSink {
 public:
  struct Event {
    std::string kind;  // "busy", "stall", "counter"
    systolic::Unit unit = systolic::Unit::kControl;
    int64_t start = 0, end = 0;
    size_t index = 0;
    std::string name;  // mnemonic, cause or counter name
    double value = 0;
  };
  void Busy(systolic::Unit unit, int64_t start, int64_t end, size_t index,
            std::string_view mnemonic) override {
    events.push_back({"busy", unit, start, end, index, std::string(mnemonic), 0});
  }
  void Stall(systolic::Unit unit, int64_t start, int64_t end, std::string_view cause) override {
    events.push_back({"stall", unit, start, end, 0, std::string(cause), 0});
  }
  void Counter(std::string_view name, int64_t cycle, double value) override {
    events.push_back({"counter", systolic::Unit::kControl, cycle, cycle, 0, std::string(name),
                      value});
  }
  void Finish(int64_t total_cycles) override { finished_at = total_cycles; }

  std::vector<Event> Of(const std::string& kind, systolic::Unit unit) const {
    std::vector<Event> out;
    for (const Event& e : events) {
      if (e.kind == kind && e.unit == unit) out.push_back(e);
    }
    return out;
  }

  std::vector<Event> events;
  int64_t finished_at = -1;
};

}  // namespace simulator::testing_util
