// Parses, checks and prints architecture keys. All per-key behaviour comes from the table in
// arch_config.def (type, range, unit); the presets live in arch_config_presets.cc.
#include "simulator/isa/arch_config.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

namespace systolic {
namespace {

constexpr std::string_view kLinkTopologyNames[] = {"ring", "torus2d", "torus3d", "switch"};

constexpr ArchKey kKeys[] = {
#define ARCH_KEY(member, key, type, min, max, unit, doc) \
  {key,                                                  \
   KeyType::k##type,                                     \
   &ArchConfig::member,                                  \
   static_cast<double>(min),                             \
   static_cast<double>(max),                             \
   unit,                                                 \
   doc},
#include "simulator/isa/arch_config.def"
};

struct MxuDtypeName {
  std::string_view name;
  uint32_t bit;
};
constexpr MxuDtypeName kMxuDtypes[] = {{"int8", kMxuInt8}, {"bf16", kMxuBf16}, {"f32", kMxuF32}};

struct ByteSuffix {
  std::string_view suffix;
  int64_t scale;
};
// Longest first so "KiB" is not read as "B".
constexpr ByteSuffix kByteSuffixes[] = {{"TiB", int64_t{1} << 40},
                                        {"GiB", int64_t{1} << 30},
                                        {"MiB", int64_t{1} << 20},
                                        {"KiB", int64_t{1} << 10},
                                        {"B", 1}};

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string ValidKeys() {
  std::string out;
  for (const ArchKey& k : kKeys) {
    if (!out.empty()) out += ", ";
    out += k.key;
  }
  return out;
}

std::string FormatDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::string RangeText(const ArchKey& key) {
  std::string text = "[";  // built by appends: GCC 12 warns falsely on "literal" + std::string&&
  text += FormatDouble(key.min);
  text += ", ";
  text += FormatDouble(key.max);
  return text + "]";
}

class ValueParser {
 public:
  ValueParser(const ArchKey& key, std::string_view text, const hlo::SourceLocation& at)
      : key_(key), text_(text), at_(at) {}

  int64_t Integer(std::string_view digits, int64_t scale) const {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0 ||
        (scale > 1 && value > INT64_MAX / scale))
      throw Bad("expected a non-negative integer");
    return CheckRange(value * scale);
  }
  int64_t Bytes() const {
    for (const ByteSuffix& s : kByteSuffixes)
      if (text_.ends_with(s.suffix))
        return Integer(Trim(text_.substr(0, text_.size() - s.suffix.size())), s.scale);
    return Integer(text_, 1);
  }
  double Real() const {
    double value = 0;
    auto [end, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), value);
    if (text_.empty() || ec != std::errc() || end != text_.data() + text_.size() ||
        !std::isfinite(value))
      throw Bad("expected a number");
    if (value < key_.min || value > key_.max) throw OutOfRange();
    return value;
  }
  LinkTopology TopologyValue() const {
    for (LinkTopology t : {LinkTopology::kRing, LinkTopology::kTorus2d, LinkTopology::kTorus3d,
                           LinkTopology::kSwitch}) {
      if (LinkTopologyName(t) == text_) return t;
    }
    throw Bad("expected ring, torus2d, torus3d or switch");
  }
  Dataflow DataflowValue() const {
    std::span<const SymbolInfo> symbols = DataflowSymbols();
    for (size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i].name == text_) return static_cast<Dataflow>(i);
    throw Bad("expected ws, os or is");
  }
  uint32_t Dtypes() const {
    uint32_t set = 0;
    std::string_view rest = text_;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view item = Trim(rest.substr(0, comma));
      bool known = false;
      for (const MxuDtypeName& d : kMxuDtypes)
        if (d.name == item) set |= d.bit, known = true;
      if (!known) throw Bad("expected a comma-separated list of int8, bf16, f32");
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return set;
  }

 private:
  int64_t CheckRange(int64_t value) const {
    if (static_cast<double>(value) < key_.min || static_cast<double>(value) > key_.max)
      throw OutOfRange();
    return value;
  }
  hlo::Error Bad(std::string_view expected) const {
    return hlo::Error(at_, "bad value " + Quote(text_) + " for " + Quote(key_.key) + ": " +
                               std::string(expected));
  }
  hlo::Error OutOfRange() const {
    return hlo::Error(at_, "value " + Quote(text_) + " for " + Quote(key_.key) +
                               " is outside its range " + RangeText(key_));
  }

  const ArchKey& key_;
  std::string_view text_;
  const hlo::SourceLocation& at_;
};

std::string FormatBytes(int64_t bytes) {
  for (const ByteSuffix& s : kByteSuffixes)
    if (s.scale > 1 && bytes >= s.scale && bytes % s.scale == 0)
      return std::to_string(bytes / s.scale) + std::string(s.suffix);
  return std::to_string(bytes);
}

}  // namespace

std::span<const ArchKey> ArchKeys() { return kKeys; }

void SetKey(ArchConfig& config, std::string_view key, std::string_view value,
            const hlo::SourceLocation& key_at, const hlo::SourceLocation& value_at) {
  const ArchKey* found = nullptr;
  for (const ArchKey& k : kKeys)
    if (k.key == key) found = &k;
  if (found == nullptr)
    throw hlo::Error(key_at, "unknown key " + Quote(key) + " (valid keys: " + ValidKeys() + ")");
  ValueParser parse(*found, value, value_at);
  switch (found->type) {
    case KeyType::kString:
      if (value.empty()) throw hlo::Error(value_at, "empty value for " + Quote(key));
      config.*std::get<std::string ArchConfig::*>(found->member) = std::string(value);
      return;
    case KeyType::kInt:
      config.*std::get<int64_t ArchConfig::*>(found->member) = parse.Integer(value, 1);
      return;
    case KeyType::kBytes:
      config.*std::get<int64_t ArchConfig::*>(found->member) = parse.Bytes();
      return;
    case KeyType::kDouble:
      config.*std::get<double ArchConfig::*>(found->member) = parse.Real();
      return;
    case KeyType::kDataflow:
      config.*std::get<Dataflow ArchConfig::*>(found->member) = parse.DataflowValue();
      return;
    case KeyType::kDtypes:
      config.*std::get<uint32_t ArchConfig::*>(found->member) = parse.Dtypes();
      return;
    case KeyType::kTopology:
      config.*std::get<LinkTopology ArchConfig::*>(found->member) = parse.TopologyValue();
      return;
  }
}

void ApplyOverride(ArchConfig& config, std::string_view assignment) {
  // Locations point into the text "--set KEY=VALUE" so the caret lands on the right character.
  auto file = std::make_shared<const std::string>("--set");
  constexpr uint32_t kPrefix = 6;  // "--set "
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos)
    throw hlo::Error(hlo::SourceLocation{file, 1, kPrefix + 1},
                     "expected KEY=VALUE, got " + Quote(assignment));
  SetKey(config, Trim(assignment.substr(0, eq)), Trim(assignment.substr(eq + 1)),
         hlo::SourceLocation{file, 1, kPrefix + 1},
         hlo::SourceLocation{file, 1, static_cast<uint32_t>(kPrefix + eq + 2)});
}

ArchConfig ParseConfigFile(std::string_view text, const std::string& filename,
                           const ArchConfig& base) {
  auto file = std::make_shared<const std::string>(filename);
  ArchConfig config = base;
  bool seen_key = false;
  uint32_t line_number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) newline = text.size();
    std::string_view line = text.substr(pos, newline - pos);
    size_t line_start = pos;
    pos = newline + 1;
    ++line_number;
    line = line.substr(0, line.find_first_of("#;"));
    if (Trim(line).empty()) continue;
    auto column = [&](std::string_view part) {
      return static_cast<uint32_t>(part.data() - text.data() - line_start + 1);
    };
    size_t eq = line.find('=');
    std::string_view key = Trim(line.substr(0, eq));
    hlo::SourceLocation key_at{file, line_number, column(key.empty() ? Trim(line) : key)};
    if (eq == std::string_view::npos) throw hlo::Error(key_at, "expected 'key = value'");
    std::string_view value = Trim(line.substr(eq + 1));
    hlo::SourceLocation value_at{file, line_number,
                                 value.empty() ? column(line.substr(eq)) + 1 : column(value)};
    if (key == "preset") {
      if (seen_key) throw hlo::Error(key_at, "'preset' must come before every other key");
      try {
        config = Preset(value);
      } catch (const hlo::Error& e) {
        throw hlo::Error(value_at, e.message());
      }
    } else {
      SetKey(config, key, value, key_at, value_at);
    }
    seen_key = true;
  }
  return config;
}

ArchConfig LoadArchConfig(const std::string& preset_or_file,
                          std::span<const std::string> overrides) {
  ArchConfig config;
  bool is_preset = false;
  for (std::string_view name : PresetNames()) is_preset |= name == preset_or_file;
  std::string presets;
  for (std::string_view name : PresetNames()) {
    if (!presets.empty()) presets += ", ";
    presets += name;
  }
  if (is_preset) {
    config = Preset(preset_or_file);
  } else {
    std::ifstream in(preset_or_file, std::ios::binary);
    if (!in)
      throw hlo::Error(
          hlo::SourceLocation{std::make_shared<const std::string>(preset_or_file), 0, 0},
          "cannot open config file (and it is not a preset: " + presets + ")");
    // A config is a few dozen `key = value` lines: refuse anything large rather than read it.
    constexpr std::streamoff kMaxConfigFileBytes = std::streamoff{1} << 20;
    in.seekg(0, std::ios::end);
    if (in.tellg() > kMaxConfigFileBytes) {
      throw hlo::Error(
          hlo::SourceLocation{std::make_shared<const std::string>(preset_or_file), 0, 0},
          "config file is larger than " + std::to_string(kMaxConfigFileBytes) + " bytes");
    }
    in.seekg(0, std::ios::beg);
    std::stringstream text;
    text << in.rdbuf();
    config = ParseConfigFile(text.str(), preset_or_file, Preset("tpu-v1"));
  }
  for (const std::string& assignment : overrides) ApplyOverride(config, assignment);
  return config;
}

std::string FormatValue(const ArchConfig& config, const ArchKey& key) {
  switch (key.type) {
    case KeyType::kString: return config.*std::get<std::string ArchConfig::*>(key.member);
    case KeyType::kInt: return std::to_string(config.*std::get<int64_t ArchConfig::*>(key.member));
    case KeyType::kBytes: return FormatBytes(config.*std::get<int64_t ArchConfig::*>(key.member));
    case KeyType::kDouble: return FormatDouble(config.*std::get<double ArchConfig::*>(key.member));
    case KeyType::kDataflow:
      return std::string(DataflowName(config.*std::get<Dataflow ArchConfig::*>(key.member)));
    case KeyType::kTopology:
      return std::string(
          LinkTopologyName(config.*std::get<LinkTopology ArchConfig::*>(key.member)));
    case KeyType::kDtypes: {
      std::string out;
      uint32_t set = config.*std::get<uint32_t ArchConfig::*>(key.member);
      for (const MxuDtypeName& d : kMxuDtypes)
        if (set & d.bit) {
          if (!out.empty()) out += ",";
          out += d.name;
        }
      return out;
    }
  }
  return "";
}

std::string FormatConfig(const ArchConfig& config) {
  std::string out;
  for (const ArchKey& key : kKeys)
    out += std::string(key.key) + " = " + FormatValue(config, key) + "\n";
  return out;
}

std::string KeysMarkdown() {
  std::string out = "| key | type | range | unit | meaning |\n|---|---|---|---|---|\n";
  for (const ArchKey& key : kKeys) {
    std::string type, range;
    switch (key.type) {
      case KeyType::kString: type = "string"; break;
      case KeyType::kInt: type = "integer", range = RangeText(key); break;
      case KeyType::kBytes: type = "bytes (KiB/MiB/GiB/TiB suffix)", range = RangeText(key); break;
      case KeyType::kDouble: type = "number", range = RangeText(key); break;
      case KeyType::kDataflow: type = "ws \\| os \\| is"; break;
      case KeyType::kDtypes: type = "list of int8, bf16, f32"; break;
      case KeyType::kTopology: type = "ring \\| torus2d \\| torus3d \\| switch"; break;
    }
    out += "| `" + std::string(key.key) + "` | " + type + " | " + range + " | " +
           std::string(key.unit) + " | " + std::string(key.doc) + " |\n";
  }
  return out;
}

std::string PresetsMarkdown() {
  std::string out = "| key |";
  std::string rule = "|---|";
  for (std::string_view name : PresetNames()) {
    out += " `" + std::string(name) + "` |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const ArchKey& key : kKeys) {
    out += "| `" + std::string(key.key) + "` |";
    for (std::string_view name : PresetNames()) {
      out += " ";
      out += FormatValue(Preset(name), key);
      out += " |";
    }
    out += "\n";
  }
  return out;
}

int64_t PeakMacsPerCycle(const ArchConfig& config) { return config.array_rows * config.array_cols; }

double PeakOpsPerSecond(const ArchConfig& config) {
  return 2.0 * static_cast<double>(PeakMacsPerCycle(config)) * config.clock_mhz * 1e6;
}

std::string_view LinkTopologyName(LinkTopology topology) {
  return kLinkTopologyNames[static_cast<int>(topology)];
}

}  // namespace systolic
