// The parameter space of `retarget sweep`: `--set KEY=V1,V2,...` axes over the accelerator's
// ArchConfig (simulator/isa/arch_config.def), the short aliases of the issue (array=RxC,
// dram_gbps, sram_kib, clock_mhz) and the cross product of the axes as numbered points.
//
// Guarantees:
//   * Every point of a SweepSpace built by BuildSweepSpace applies cleanly to the base config:
//     every value of every axis was checked against the key's range before any work starts.
//   * Unknown keys are hlo::Errors listing every valid key (aliases first, then the full keys);
//     a key set by two axes (e.g. `array` and `array.rows`) and an empty value are errors too.
//   * Points are numbered 0..size()-1 like nested loops in the order the axes were given: the
//     last axis varies fastest. The number of points is bounded by kMaxSweepPoints (checked
//     without overflow), so nothing is allocated in proportion to an absurd product.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/isa/arch_config.h"

namespace sweep {

inline constexpr int64_t kMaxSweepPoints = 100000;
inline constexpr size_t kMaxValuesPerAxis = 10000;

// How an alias's value becomes full-key assignments.
enum class AliasValue : uint8_t {
  kSame,        // the value unchanged
  kRowsByCols,  // "RxC" (or "N" for NxN) -> first_key=R, second_key=C
  kKibToBytes,  // a whole number of KiB -> first_key = value * 1024 bytes
};

// One short name of the issue; the single table of aliases (sweep_space.cc).
struct KeyAlias {
  std::string_view alias;       // "dram_gbps"
  std::string_view first_key;   // "dram.bandwidth_gbps"
  std::string_view second_key;  // only for kRowsByCols
  AliasValue value;
  std::string_view doc;  // for --help and docs/sweep.md
};

std::span<const KeyAlias> KeyAliases();

// Every key --set accepts, aliases first then the ArchConfig keys, comma-separated.
std::string ValidSweepKeys();

// The full-key assignments ("array.rows=16") of `key=value`, where `key` is an alias or a full
// key. Throws hlo::Error for an unknown key (listing the valid ones) or a malformed alias value.
std::vector<std::string> ExpandSetting(std::string_view key, std::string_view value);

struct SweepAxis {
  std::string key;                  // as the user typed it: "array", "dram.bandwidth_gbps"
  std::vector<std::string> values;  // as typed: "16x16", "32x32"
};

// One point of the cross product.
struct SweepPoint {
  int64_t index = 0;
  std::vector<std::string> values;       // one per axis, as typed
  std::vector<std::string> assignments;  // full-key "k=v", in axis order
};

class SweepSpace {
 public:
  SweepSpace() = default;
  explicit SweepSpace(std::vector<SweepAxis> axes);  // callers use BuildSweepSpace
  const std::vector<SweepAxis>& axes() const { return axes_; }
  int64_t size() const { return size_; }
  SweepPoint Point(int64_t index) const;  // hlo::Error outside [0, size())

 private:
  std::vector<SweepAxis> axes_;
  int64_t size_ = 1;
};

// Parses one `--set KEY=V1,V2,...` value.
SweepAxis ParseAxis(std::string_view flag_value);

// The axes of every --set, validated against `base` (see the guarantees above).
SweepSpace BuildSweepSpace(std::span<const std::string> sets, const systolic::ArchConfig& base);

// `base` with the point's assignments applied in order.
systolic::ArchConfig PointConfig(const systolic::ArchConfig& base, const SweepPoint& point);

}  // namespace sweep
