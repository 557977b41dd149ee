// The sweep's axes and cross product (contract in sweep_space.h).
#include "tools/sweep/sweep_space.h"

#include <charconv>
#include <set>

#include "hlo/diagnostic.h"

namespace sweep {
namespace {

// The short names. The full keys of arch_config.def are accepted as well.
constexpr KeyAlias kAliases[] = {
    {"array", "array.rows", "array.cols", AliasValue::kRowsByCols,
     "RxC sets array.rows=R and array.cols=C (N alone means NxN)"},
    {"dram_gbps", "dram.bandwidth_gbps", "", AliasValue::kSame, "DRAM bandwidth in GB/s"},
    {"sram_kib", "ub.bytes", "", AliasValue::kKibToBytes, "unified buffer size in KiB"},
    {"clock_mhz", "clock.mhz", "", AliasValue::kSame, "core clock in MHz"},
};

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A whole number in [1, 2^40] (the largest ArchConfig range), or an hlo::Error naming `what`.
int64_t PositiveWholeNumber(std::string_view text, std::string_view what) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 ||
      value > (int64_t{1} << 40)) {
    throw hlo::Error(std::string(what) + ": expected a whole number >= 1, got '" +
                     std::string(text) + "'");
  }
  return value;
}

const KeyAlias* FindAlias(std::string_view key) {
  for (const KeyAlias& alias : kAliases) {
    if (alias.alias == key) return &alias;
  }
  return nullptr;
}

bool IsArchKey(std::string_view key) {
  for (const systolic::ArchKey& arch_key : systolic::ArchKeys()) {
    if (arch_key.key == key) return true;
  }
  return false;
}

std::vector<std::string> ExpandAlias(const KeyAlias& alias, std::string_view value) {
  const std::string first(alias.first_key), second(alias.second_key);
  const std::string context = "--set " + std::string(alias.alias);
  switch (alias.value) {
    case AliasValue::kSame:
      return {first + "=" + std::string(value)};
    case AliasValue::kRowsByCols: {
      const size_t x = value.find_first_of("xX");
      std::string_view rows = value.substr(0, x);
      std::string_view cols = x == std::string_view::npos ? value : value.substr(x + 1);
      if (rows.empty() || cols.empty()) {
        throw hlo::Error(context + ": expected RxC (e.g. 128x128), got '" + std::string(value) +
                         "'");
      }
      return {first + "=" + std::to_string(PositiveWholeNumber(rows, context + " rows")),
              second + "=" + std::to_string(PositiveWholeNumber(cols, context + " columns"))};
    }
    case AliasValue::kKibToBytes:
      return {first + "=" + std::to_string(PositiveWholeNumber(value, context) * 1024)};
  }
  return {};
}

}  // namespace

std::span<const KeyAlias> KeyAliases() { return kAliases; }

std::string ValidSweepKeys() {
  std::string keys;
  for (const KeyAlias& alias : kAliases)
    keys += (keys.empty() ? "" : ", ") + std::string(alias.alias);
  for (const systolic::ArchKey& key : systolic::ArchKeys()) keys += ", " + std::string(key.key);
  return keys;
}

std::vector<std::string> ExpandSetting(std::string_view key, std::string_view value) {
  if (const KeyAlias* alias = FindAlias(key)) return ExpandAlias(*alias, value);
  if (IsArchKey(key)) return {std::string(key) + "=" + std::string(value)};
  throw hlo::Error("--set: unknown key '" + std::string(key) +
                   "' (valid keys: " + ValidSweepKeys() + ")");
}

SweepSpace::SweepSpace(std::vector<SweepAxis> axes) : axes_(std::move(axes)) {
  for (const SweepAxis& axis : axes_) {
    const int64_t n = static_cast<int64_t>(axis.values.size());
    if (n == 0 || size_ > kMaxSweepPoints / n) {
      throw hlo::Error("the sweep has " +
                       std::string(n == 0 ? "no" : "more than " + std::to_string(kMaxSweepPoints)) +
                       " points");
    }
    size_ *= n;
  }
}

SweepPoint SweepSpace::Point(int64_t index) const {
  if (index < 0 || index >= size_) {
    throw hlo::Error("point " + std::to_string(index) + " is outside the sweep (points 0.." +
                     std::to_string(size_ - 1) + ")");
  }
  SweepPoint point;
  point.index = index;
  point.values.resize(axes_.size());
  // Mixed radix, last axis fastest: peel digits from the end.
  int64_t rest = index;
  for (size_t a = axes_.size(); a-- > 0;) {
    const int64_t n = static_cast<int64_t>(axes_[a].values.size());
    point.values[a] = axes_[a].values[static_cast<size_t>(rest % n)];
    rest /= n;
  }
  for (size_t a = 0; a < axes_.size(); ++a) {
    for (std::string& assignment : ExpandSetting(axes_[a].key, point.values[a])) {
      point.assignments.push_back(std::move(assignment));
    }
  }
  return point;
}

SweepAxis ParseAxis(std::string_view flag_value) {
  const size_t eq = flag_value.find('=');
  if (eq == std::string_view::npos) {
    throw hlo::Error("--set: expected KEY=V1,V2,..., got '" + std::string(flag_value) + "'");
  }
  SweepAxis axis;
  axis.key = std::string(Trim(flag_value.substr(0, eq)));
  std::string_view list = flag_value.substr(eq + 1);
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    std::string_view value = Trim(list.substr(start, comma - start));
    if (value.empty()) {
      throw hlo::Error("--set " + axis.key + ": empty value in '" + std::string(list) + "'");
    }
    if (axis.values.size() == kMaxValuesPerAxis) {
      throw hlo::Error("--set " + axis.key + ": more than " + std::to_string(kMaxValuesPerAxis) +
                       " values");
    }
    axis.values.emplace_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return axis;
}

SweepSpace BuildSweepSpace(std::span<const std::string> sets, const systolic::ArchConfig& base) {
  std::vector<SweepAxis> axes;
  std::set<std::string> keys_set;  // full keys, so `array` and `array.rows` collide
  for (const std::string& set : sets) {
    SweepAxis axis = ParseAxis(set);
    std::set<std::string> axis_keys;
    for (const std::string& value : axis.values) {
      systolic::ArchConfig probe = base;
      for (const std::string& assignment : ExpandSetting(axis.key, value)) {
        systolic::ApplyOverride(probe, assignment);  // range and syntax of every value
        axis_keys.insert(assignment.substr(0, assignment.find('=')));
      }
    }
    for (const std::string& key : axis_keys) {
      if (!keys_set.insert(key).second) {
        throw hlo::Error("--set " + axis.key + ": key '" + key +
                         "' is already set by another --set");
      }
    }
    axes.push_back(std::move(axis));
  }
  return SweepSpace(std::move(axes));
}

systolic::ArchConfig PointConfig(const systolic::ArchConfig& base, const SweepPoint& point) {
  systolic::ArchConfig config = base;
  for (const std::string& assignment : point.assignments)
    systolic::ApplyOverride(config, assignment);
  return config;
}

}  // namespace sweep
