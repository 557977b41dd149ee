// VcdWriter (trace.h): a value-change dump with, per unit, a 1-bit `<unit>_busy` wire and a
// 32-bit `<unit>_instruction` integer (the running instruction's index, x when idle).
//
// Why temporary files: VCD must be written in global time order, but the simulator reports each
// unit's instructions when that unit finishes them, so one unit's report can lie far behind
// another's. Each unit's changes are already in time order, so they are spilled to one file per
// unit (16 bytes per change) and merged at Finish() — constant memory whatever the program size.
#include <cmath>
#include <cstring>

#include "hlo/diagnostic.h"
#include "hlo/json_text.h"
#include "simulator/trace.h"

namespace simulator {
namespace {

constexpr int64_t kIdle = -1;
constexpr double kMinUnitsPerCycle = 1000;  // keeps rounding below 0.05 % of a cycle
constexpr int kFinestExponent = 15;         // 1 fs
constexpr int kIndexBits = 32;              // .bin programs count instructions in 32 bits

// VCD identifiers are printable ASCII; two per unit.
char BusyId(size_t unit) { return static_cast<char>('!' + 2 * unit); }
char IndexId(size_t unit) { return static_cast<char>('!' + 2 * unit + 1); }

std::string Binary(int64_t value) {
  if (value == 0) return "0";
  std::string bits;
  for (uint64_t v = static_cast<uint64_t>(value); v != 0; v >>= 1) {
    bits.insert(bits.begin(), static_cast<char>('0' + (v & 1)));
  }
  return bits;
}

}  // namespace

VcdWriter::Timescale VcdWriter::ChooseTimescale(double clock_mhz) {
  // The unit is 10^-n s; one cycle lasts 10^(n-6) / clock_mhz of them (10^k is exact in a double).
  int n = 0;
  auto units_per_cycle = [&](int exponent) {
    return exponent >= 6 ? std::pow(10.0, exponent - 6) / clock_mhz
                         : 1.0 / (std::pow(10.0, 6 - exponent) * clock_mhz);
  };
  while (n < kFinestExponent && units_per_cycle(n) < kMinUnitsPerCycle) ++n;
  static constexpr const char* kPrefixes[] = {"s", "ms", "us", "ns", "ps", "fs"};
  const int prefix = (n + 2) / 3;                                   // ceil(n / 3)
  const int magnitude = static_cast<int>(std::pow(10, 3 * prefix - n));  // 1, 10 or 100
  return {std::to_string(magnitude) + " " + kPrefixes[prefix], units_per_cycle(n)};
}

VcdWriter::VcdWriter(std::ostream& out, double clock_mhz)
    : out_(out), timescale_(ChooseTimescale(clock_mhz)) {
  for (UnitLog& log : logs_) {
    log.file = std::tmpfile();
    if (log.file == nullptr) {
      throw hlo::Error(std::string("VCD: cannot create a temporary file (") +
                       std::strerror(errno) + ")");
    }
  }
}

VcdWriter::~VcdWriter() {
  for (UnitLog& log : logs_) {
    if (log.file != nullptr) std::fclose(log.file);
  }
}

int64_t VcdWriter::VcdTime(int64_t cycle) const {
  return std::llround(static_cast<double>(cycle) * timescale_.units_per_cycle);
}

void VcdWriter::Append(size_t unit, Change change) {
  if (std::fwrite(&change, sizeof change, 1, logs_[unit].file) != 1) spill_failed_ = true;
}

void VcdWriter::Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, size_t index,
                     std::string_view) {
  const auto u = static_cast<size_t>(unit);
  if (u >= kUnitCount || finished_) return;
  UnitLog& log = logs_[u];
  if (log.open_end >= 0 && start_cycle < log.open_end) start_cycle = log.open_end;  // clip
  if (end_cycle <= start_cycle) return;  // zero length: nothing visible
  // Back to back with the previous instruction: the wire stays high, only the index changes.
  if (log.open_end >= 0 && start_cycle > log.open_end) Append(u, {log.open_end, kIdle});
  Append(u, {start_cycle, static_cast<int64_t>(index)});
  log.open_end = end_cycle;
}

void VcdWriter::WriteHeader() {
  out_ << "$version retarget sim $end\n"
       << "$comment one clock cycle = " << hlo::JsonNumber(timescale_.units_per_cycle)
       << " time units $end\n"
       << "$timescale " << timescale_.unit << " $end\n"
       << "$scope module accelerator $end\n";
  for (size_t u = 0; u < kUnitCount; ++u) {
    const std::string_view name = systolic::UnitName(static_cast<systolic::Unit>(u));
    out_ << "$var wire 1 " << BusyId(u) << " " << name << "_busy $end\n"
         << "$var integer " << kIndexBits << " " << IndexId(u) << " " << name
         << "_instruction $end\n";
  }
  out_ << "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n";
  for (size_t u = 0; u < kUnitCount; ++u) out_ << "0" << BusyId(u) << "\nbx " << IndexId(u) << "\n";
  out_ << "$end\n";
}

void VcdWriter::MergeChanges(int64_t total_cycles) {
  // A one-record lookahead per unit; pick the earliest (ties: lower unit first).
  std::array<Change, kUnitCount> next{};
  std::array<bool, kUnitCount> has_next{};
  std::array<bool, kUnitCount> busy{};
  for (size_t u = 0; u < kUnitCount; ++u) {
    std::rewind(logs_[u].file);
    has_next[u] = std::fread(&next[u], sizeof(Change), 1, logs_[u].file) == 1;
  }
  int64_t now = 0;
  while (true) {
    size_t pick = kUnitCount;
    for (size_t u = 0; u < kUnitCount; ++u) {
      if (has_next[u] && (pick == kUnitCount || next[u].cycle < next[pick].cycle)) pick = u;
    }
    if (pick == kUnitCount) break;
    const Change change = next[pick];
    const int64_t time = VcdTime(change.cycle);
    if (time > now) {
      out_ << "#" << time << "\n";
      now = time;
    }
    const bool is_busy = change.index != kIdle;
    if (is_busy != busy[pick]) out_ << (is_busy ? "1" : "0") << BusyId(pick) << "\n";
    busy[pick] = is_busy;
    if (is_busy) {
      out_ << "b" << Binary(change.index) << " " << IndexId(pick) << "\n";
    } else {
      out_ << "bx " << IndexId(pick) << "\n";
    }
    has_next[pick] = std::fread(&next[pick], sizeof(Change), 1, logs_[pick].file) == 1;
  }
  // End the dump at the end of the run, so viewers show its whole length.
  if (VcdTime(total_cycles) > now) out_ << "#" << VcdTime(total_cycles) << "\n";
}

void VcdWriter::Finish(int64_t total_cycles) {
  if (finished_) return;
  finished_ = true;
  for (size_t u = 0; u < kUnitCount; ++u) {
    if (logs_[u].open_end >= 0) Append(u, {logs_[u].open_end, kIdle});
    if (std::fflush(logs_[u].file) != 0) spill_failed_ = true;
  }
  WriteHeader();
  MergeChanges(total_cycles);
  out_.flush();
}

}  // namespace simulator
