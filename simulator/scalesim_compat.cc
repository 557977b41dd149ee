// SCALE-Sim file formats and COMPUTE_REPORT.csv (scalesim_compat.h). The readers follow what
// SCALE-Sim v2's own readers accept (configparser for .cfg, split(',') for .csv), but reject
// what would make SCALE-Sim crash or mis-read, with the file, line and column.
#include "simulator/scalesim_compat.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <system_error>

namespace simulator {
namespace {

// Bounds that keep absurd input from costing unbounded time or memory.
constexpr int64_t kMaxDimension = int64_t{1} << 31;
// A depthwise row becomes one layer per channel, so a short line can ask for very many: 65,536
// layers is ten times MobileNetV2's expanded count, and a 134-byte file asking for a million took
// seconds and 150 MB (found by scalesim_fuzzer).
constexpr size_t kMaxLayers = size_t{1} << 16;

std::string_view Trim(std::string_view s) {
  size_t begin = 0;
  while (begin < s.size() && (s[begin] == ' ' || s[begin] == '\t' || s[begin] == '\r')) ++begin;
  size_t end = s.size();
  while (end > begin && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r')) --end;
  return s.substr(begin, end - begin);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits text into lines (without the '\n'); line i of the result is line i + 1 of the file.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

hlo::SourceLocation At(const std::shared_ptr<const std::string>& file, size_t line, size_t col) {
  return hlo::SourceLocation{file, static_cast<uint32_t>(line), static_cast<uint32_t>(col)};
}

// A decimal integer in [min, kMaxDimension]; `what` names it in the error.
int64_t ParseInt(std::string_view text, int64_t min, const std::string& what,
                 const hlo::SourceLocation& at) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    throw hlo::Error(at, what + ": expected an integer, got '" + std::string(text) + "'");
  }
  if (ec == std::errc::result_out_of_range || value < min || value > kMaxDimension) {
    throw hlo::Error(at, what + ": " + std::string(text) + " is out of range [" +
                             std::to_string(min) + ", " + std::to_string(kMaxDimension) + "]");
  }
  return value;
}

// ---- .cfg ----------------------------------------------------------------------------------

struct IniValue {
  std::string value;
  hlo::SourceLocation location;  // of the value
};
struct IniSection {
  hlo::SourceLocation location;  // of the header
  std::map<std::string, IniValue> values;  // lower-case key
};

std::map<std::string, IniSection> ParseIni(std::string_view text,
                                           const std::shared_ptr<const std::string>& file) {
  std::map<std::string, IniSection> sections;
  IniSection* current = nullptr;
  std::vector<std::string_view> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view raw = lines[i];
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    const size_t indent = raw.find(line[0]) + 1;  // 1-based column of the first character
    if (line[0] == '[') {
      if (line.back() != ']') {
        throw hlo::Error(At(file, i + 1, indent), "expected ']' after section name");
      }
      std::string name(Trim(line.substr(1, line.size() - 2)));
      if (sections.count(name) != 0) {
        throw hlo::Error(At(file, i + 1, indent), "duplicate section [" + name + "]");
      }
      current = &sections[name];
      current->location = At(file, i + 1, indent);
      continue;
    }
    const size_t separator = line.find_first_of("=:");
    if (separator == std::string_view::npos) {
      throw hlo::Error(At(file, i + 1, indent), "expected 'key = value' or 'key: value'");
    }
    if (current == nullptr) {
      throw hlo::Error(At(file, i + 1, indent), "key before the first [section]");
    }
    std::string key = Lower(Trim(line.substr(0, separator)));
    if (key.empty()) throw hlo::Error(At(file, i + 1, indent), "empty key");
    std::string_view value = Trim(line.substr(separator + 1));
    size_t value_col = indent + separator + 1;
    if (!value.empty()) value_col = static_cast<size_t>(value.data() - raw.data()) + 1;
    if (current->values.count(key) != 0) {
      throw hlo::Error(At(file, i + 1, indent), "duplicate key '" + key + "' in its section");
    }
    current->values[key] = IniValue{std::string(value), At(file, i + 1, value_col)};
  }
  return sections;
}

const IniSection& RequireSection(const std::map<std::string, IniSection>& sections,
                                 const std::string& name,
                                 const std::shared_ptr<const std::string>& file) {
  auto it = sections.find(name);
  if (it == sections.end()) throw hlo::Error(At(file, 0, 0), "missing section [" + name + "]");
  return it->second;
}

const IniValue& RequireKey(const IniSection& section, const std::string& section_name,
                           const std::string& key) {
  auto it = section.values.find(Lower(key));
  if (it == section.values.end()) {
    throw hlo::Error(section.location, "section [" + section_name + "] lacks '" + key + "'");
  }
  return it->second;
}

systolic::Dataflow ParseDataflowName(const IniValue& value) {
  if (value.value == "os") return systolic::Dataflow::kOs;
  if (value.value == "ws") return systolic::Dataflow::kWs;
  if (value.value == "is") return systolic::Dataflow::kIs;
  throw hlo::Error(value.location, "Dataflow: expected os, ws or is, got '" + value.value + "'");
}

// ---- .csv ----------------------------------------------------------------------------------

struct Field {
  std::string_view text;  // trimmed
  size_t column = 0;      // 1-based column of the field's first character
};

std::vector<Field> SplitFields(std::string_view raw) {
  std::vector<Field> fields;
  size_t start = 0;
  while (true) {
    size_t end = raw.find(',', start);
    const size_t length = end == std::string_view::npos ? raw.npos : end - start;
    std::string_view cell = raw.substr(start, length);
    std::string_view trimmed = Trim(cell);
    size_t column = start + 1;
    if (!trimmed.empty()) column = static_cast<size_t>(trimmed.data() - raw.data()) + 1;
    fields.push_back({trimmed, column});
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (fields.size() > 1 && fields.back().text.empty()) fields.pop_back();  // the trailing comma
  return fields;
}

}  // namespace

ScaleSimConfig ParseScaleSimConfig(std::string_view text, const std::string& file_name) {
  auto file = std::make_shared<const std::string>(file_name);
  std::map<std::string, IniSection> sections = ParseIni(text, file);
  ScaleSimConfig config;

  const IniSection& general = RequireSection(sections, "general", file);
  config.run_name = RequireKey(general, "general", "run_name").value;

  const std::string arch_name = "architecture_presets";
  const IniSection& arch = RequireSection(sections, arch_name, file);
  auto int_key = [&](const std::string& key, int64_t min) {
    const IniValue& value = RequireKey(arch, arch_name, key);
    return ParseInt(value.value, min, key, value.location);
  };
  config.array.rows = int_key("ArrayHeight", 1);
  config.array.cols = int_key("ArrayWidth", 1);
  config.ifmap_sram_kb = int_key("IfmapSramSzkB", 0);
  config.filter_sram_kb = int_key("FilterSramSzkB", 0);
  config.ofmap_sram_kb = int_key("OfmapSramSzkB", 0);
  int_key("IfmapOffset", 0);
  int_key("FilterOffset", 0);
  int_key("OfmapOffset", 0);
  config.array.dataflow = ParseDataflowName(RequireKey(arch, arch_name, "Dataflow"));

  const IniSection& run = RequireSection(sections, "run_presets", file);
  const IniValue& mode = RequireKey(run, "run_presets", "InterfaceBandwidth");
  if (mode.value != "CALC" && mode.value != "USER") {
    throw hlo::Error(mode.location,
                     "InterfaceBandwidth: expected CALC or USER, got '" + mode.value + "'");
  }
  config.interface_bandwidth = mode.value;
  if (mode.value == "USER") config.bandwidth = RequireKey(arch, arch_name, "Bandwidth").value;
  else if (auto it = arch.values.find("bandwidth"); it != arch.values.end()) {
    config.bandwidth = it->second.value;
  }
  return config;
}

std::vector<TopologyLayer> ParseScaleSimTopology(std::string_view text,
                                                 const std::string& file_name, bool gemm) {
  auto file = std::make_shared<const std::string>(file_name);
  static const char* const kConvColumns[] = {"IFMAP height", "IFMAP width", "filter height",
                                             "filter width", "channels",    "num filter",
                                             "stride"};
  static const char* const kGemmColumns[] = {"M", "N", "K"};
  const size_t numbers = gemm ? 3 : 7;
  std::vector<TopologyLayer> layers;
  std::vector<std::string_view> lines = Lines(text);
  for (size_t i = 1; i < lines.size(); ++i) {  // line 1 is the header
    if (Trim(lines[i]).empty()) continue;
    std::vector<Field> fields = SplitFields(lines[i]);
    // A row of empty cells is a spacer (Resnet50.csv has one; SCALE-Sim itself fails on it).
    if (std::all_of(fields.begin(), fields.end(), [](const Field& f) { return f.text.empty(); })) {
      continue;
    }
    if (fields.size() < numbers + 1) {
      const Field& last = fields.back();
      throw hlo::Error(At(file, i + 1, last.column + last.text.size()),
                       "expected " + std::to_string(numbers + 1) + " fields (" +
                           (gemm ? "name, M, N, K" : "name and 7 conv dimensions") + "), got " +
                           std::to_string(fields.size()) +
                           (gemm ? "" : "; is this a GEMM topology (use --gemm)?"));
    }
    int64_t v[7] = {};
    for (size_t f = 0; f < numbers; ++f) {
      const Field& field = fields[f + 1];
      v[f] = ParseInt(field.text, 1, gemm ? kGemmColumns[f] : kConvColumns[f],
                      At(file, i + 1, field.column));
    }
    TopologyLayer layer;
    layer.name = std::string(fields[0].text);
    layer.location = At(file, i + 1, fields[0].column);
    if (gemm) {
      layer.gemm = GemmShape{v[0], v[1], v[2]};
      layers.push_back(layer);
    } else {
      ConvShape conv{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[6]};
      const bool depthwise = layer.name.find("DP") != std::string::npos;
      const int64_t copies = depthwise ? conv.channels : 1;
      if (depthwise) conv.channels = 1;
      if (static_cast<size_t>(copies) > kMaxLayers - layers.size()) {
        throw hlo::Error(layer.location, "more than " + std::to_string(kMaxLayers) + " layers");
      }
      try {
        layer.gemm = ConvAsGemm(conv);
      } catch (const hlo::Error& e) {
        throw hlo::Error(layer.location, e.message());
      }
      const std::string base = layer.name;
      for (int64_t c = 0; c < copies; ++c) {
        if (depthwise) layer.name = base + "Channel_" + std::to_string(c);
        layers.push_back(layer);
      }
    }
    if (layers.size() > kMaxLayers) {
      throw hlo::Error(layer.location, "more than " + std::to_string(kMaxLayers) + " layers");
    }
  }
  if (layers.empty()) throw hlo::Error(At(file, 0, 0), "no layers (only a header line?)");
  return layers;
}

std::vector<MxuTiming> TimeTopology(const ScaleSimConfig& config,
                                    const std::vector<TopologyLayer>& layers) {
  std::vector<MxuTiming> timings;
  timings.reserve(layers.size());
  for (const TopologyLayer& layer : layers) {
    try {
      timings.push_back(TimeGemm(config.array, layer.gemm));
    } catch (const hlo::Error& e) {
      throw hlo::Error(layer.location, "layer '" + layer.name + "': " + e.message());
    }
  }
  return timings;
}

std::string PythonFloatRepr(double value) {
  if (value != value) return "nan";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  if (value == std::numeric_limits<double>::infinity()) return "inf";
  if (value == -std::numeric_limits<double>::infinity()) return "-inf";
  // repr() prints the shortest round-tripping digits: positional for 1e-4 <= |x| < 1e16,
  // scientific (at least two exponent digits) otherwise; a positional integer gains ".0".
  char buffer[64];
  const double magnitude = std::fabs(value);
  const bool positional = magnitude >= 1e-4 && magnitude < 1e16;
  const std::chars_format format =
      positional ? std::chars_format::fixed : std::chars_format::scientific;
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, format);
  std::string text(buffer, result.ptr);
  // Scientific: to_chars writes "1e-05" / "1e+16" exactly as Python does.
  if (positional && text.find('.') == std::string::npos) text += ".0";
  return text;
}

std::string FormatComputeReport(const std::vector<MxuTiming>& layers) {
  std::string out =
      "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
      "Compute Util %,\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    const MxuTiming& t = layers[i];
    out += std::to_string(i) + ", " + std::to_string(t.total_cycles) + ", " +
           std::to_string(t.stall_cycles) + ", " + PythonFloatRepr(t.overall_utilization_percent) +
           ", " + PythonFloatRepr(t.mapping_efficiency_percent) + ", " +
           PythonFloatRepr(t.compute_utilization_percent) + ",\n";
  }
  return out;
}

}  // namespace simulator
