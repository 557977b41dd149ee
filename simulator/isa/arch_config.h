// The accelerator's architecture description: named presets, `key = value` config files and
// `--set key=value` overrides, all driven by the one key table in arch_config.def.
//
// Guarantees: every ArchConfig produced here (presets included) has every key inside its range;
// FormatConfig() prints every key and ParseConfigFile() of that text gives the same config back;
// unknown keys and bad values are hlo::Errors at FILE:LINE:COL (an unknown key lists the valid
// ones). Sources of the preset numbers are cited in docs/accelerator.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hlo/diagnostic.h"
#include "simulator/isa/isa.h"

namespace systolic {

// MXU input types, a bit set in ArchConfig::mxu_dtypes.
enum MxuDtypeBit : uint32_t { kMxuInt8 = 1, kMxuBf16 = 2, kMxuF32 = 4 };

// How the chips of a multi-chip system are joined (link.topology; compiler/communication.h says
// what each costs).
enum class LinkTopology : uint8_t { kRing, kTorus2d, kTorus3d, kSwitch };
std::string_view LinkTopologyName(LinkTopology topology);  // "ring", "torus2d", ...

struct ArchConfig {
#define ARCH_KEY(member, key, type, min, max, unit, doc) ARCH_MEMBER_TYPE_##type member{};
#define ARCH_MEMBER_TYPE_String std::string
#define ARCH_MEMBER_TYPE_Int int64_t
#define ARCH_MEMBER_TYPE_Bytes int64_t
#define ARCH_MEMBER_TYPE_Double double
#define ARCH_MEMBER_TYPE_Dataflow Dataflow
#define ARCH_MEMBER_TYPE_Dtypes uint32_t
#define ARCH_MEMBER_TYPE_Topology LinkTopology
#include "simulator/isa/arch_config.def"
  bool operator==(const ArchConfig&) const = default;
};
#undef ARCH_MEMBER_TYPE_String
#undef ARCH_MEMBER_TYPE_Int
#undef ARCH_MEMBER_TYPE_Bytes
#undef ARCH_MEMBER_TYPE_Double
#undef ARCH_MEMBER_TYPE_Dataflow
#undef ARCH_MEMBER_TYPE_Dtypes
#undef ARCH_MEMBER_TYPE_Topology

enum class KeyType : uint8_t { kString, kInt, kBytes, kDouble, kDataflow, kDtypes, kTopology };

struct ArchKey {
  std::string_view key;
  KeyType type;
  std::variant<std::string ArchConfig::*, int64_t ArchConfig::*, double ArchConfig::*,
               Dataflow ArchConfig::*, uint32_t ArchConfig::*, LinkTopology ArchConfig::*>
      member;
  double min;
  double max;
  std::string_view unit;
  std::string_view doc;
};

std::span<const ArchKey> ArchKeys();

std::span<const std::string_view> PresetNames();  // tpu-v1, gemmini, tpu-v4-mxu
// Throws hlo::Error listing the presets if `name` is not one.
ArchConfig Preset(std::string_view name);

// Sets one key from its text value. `key_at` / `value_at` locate the key and value in their
// input for error messages.
void SetKey(ArchConfig& config, std::string_view key, std::string_view value,
            const hlo::SourceLocation& key_at, const hlo::SourceLocation& value_at);
// Applies one `--set key=value` override (locations point into "--set KEY=VALUE").
void ApplyOverride(ArchConfig& config, std::string_view assignment);

// `key = value` lines; `#` or `;` start a comment; an optional first key `preset = NAME` starts
// from that preset instead of `base`.
ArchConfig ParseConfigFile(std::string_view text, const std::string& filename,
                           const ArchConfig& base);
// A preset name or a config file path, then the overrides in order (the CLI's --config/--set).
ArchConfig LoadArchConfig(const std::string& preset_or_file,
                          std::span<const std::string> overrides);

std::string FormatValue(const ArchConfig& config, const ArchKey& key);
std::string FormatConfig(const ArchConfig& config);  // every key, `key = value` per line
std::string KeysMarkdown();                          // the key table of docs/accelerator.md
std::string PresetsMarkdown();  // every key's value in every preset, for the same document

// Derived figures.
int64_t PeakMacsPerCycle(const ArchConfig& config);
double PeakOpsPerSecond(const ArchConfig& config);  // 2 ops per MAC

}  // namespace systolic
