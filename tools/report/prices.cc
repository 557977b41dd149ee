// The report's price table and its `key = value` file format (contract in prices.h).
//
// Guarantees: every error names FILE:LINE:COL of the offending key or value; a file never
// allocates more than kMaxPriceFileBytes; numbers are parsed with from_chars (no locale, no
// NaN/infinity accepted).
#include "tools/report/prices.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/diagnostic.h"
#include "targets/descriptions.h"

namespace report {
namespace {

// Where each default price comes from (the numbers themselves are the TargetDescriptions').
struct Citation {
  std::string_view target;
  std::string_view source;
};
constexpr Citation kCitations[] = {
    {"interp", "one vCPU of the cpu target's AWS EC2 m7i.large (half of $0.1008/hour)"},
    {"cpu", "AWS EC2 m7i.large (2 vCPU, 8 GiB) us-east-1 Linux on-demand, "
            "aws.amazon.com/ec2/pricing"},
    {"gpu", "on-demand H200 SXM rental, spheron.network (March 2026); hyperscaler range "
            "$4.50-7.00, mercatus-ai.com/blog/cloud-gpu-pricing (May 2026)"},
    {"systolic", "stand-in: Google Cloud TPU v5e on-demand per chip-hour, "
                 "cloud.google.com/tpu/pricing (TPU v1 was never rented)"},
};

// The fields a price file may set per target.
enum class Field { kUsdPerHour, kSource };
struct FieldName {
  std::string_view name;
  Field field;
};
constexpr FieldName kFields[] = {{"usd_per_hour", Field::kUsdPerHour}, {"source", Field::kSource}};

constexpr double kMaxUsdPerHour = 1e6;

std::string Quote(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string FieldNames() {
  std::vector<std::string> names;
  for (const FieldName& f : kFields) names.emplace_back(f.name);
  return Joined(names);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Trims blanks; `offset` advances by what was removed at the front.
std::string_view Trim(std::string_view text, size_t& offset) {
  while (!text.empty() && IsSpace(text.front())) {
    text.remove_prefix(1);
    ++offset;
  }
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

// A number may be followed by a comment; a source is free text and keeps every character.
std::string_view WithoutComment(std::string_view value) {
  value = value.substr(0, value.find_first_of("#;"));
  while (!value.empty() && IsSpace(value.back())) value.remove_suffix(1);
  return value;
}

double ParseUsd(std::string_view text, const hlo::SourceLocation& at, std::string_view key) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    throw hlo::Error(at, "bad value " + Quote(text) + " for " + Quote(key) +
                             ": expected a number of US dollars per hour");
  }
  if (value < 0 || value > kMaxUsdPerHour) {
    throw hlo::Error(at, "value " + Quote(text) + " for " + Quote(key) +
                             " is outside its range [0, 1e6] US dollars per hour");
  }
  return value;
}

}  // namespace

PriceTable DefaultPrices() {
  PriceTable table;
  for (const std::string& name : targets::DescriptionNames()) {
    const compiler::TargetDescription* target = targets::FindDescription(name);
    Price price;
    if (target != nullptr && target->price_per_hour_usd > 0) {
      price.usd_per_hour = target->price_per_hour_usd;
    }
    for (const Citation& citation : kCitations) {
      if (citation.target == name) price.source = std::string(citation.source);
    }
    table[name] = price;
  }
  return table;
}

void ApplyPriceText(PriceTable& table, std::string_view text, const std::string& filename) {
  auto file = std::make_shared<const std::string>(filename);
  std::map<std::string, uint32_t> seen;  // key -> line it was first set on
  uint32_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    size_t key_column = 0;
    const std::string_view trimmed = Trim(line, key_column);
    if (trimmed.empty() || trimmed.front() == '#' || trimmed.front() == ';') continue;
    const hlo::SourceLocation key_at{file, line_number, static_cast<uint32_t>(key_column + 1)};
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      throw hlo::Error(key_at, "expected 'TARGET.FIELD = VALUE' (fields: " + FieldNames() + ")");
    }
    size_t unused = 0, value_column = eq + 1;
    const std::string_view key = Trim(line.substr(0, eq), unused);
    const std::string_view value = Trim(line.substr(eq + 1), value_column);
    const hlo::SourceLocation value_at{file, line_number, static_cast<uint32_t>(value_column + 1)};

    const size_t dot = key.find('.');
    const std::string target(key.substr(0, dot));
    if (table.count(target) == 0) {
      throw hlo::Error(key_at, "unknown target " + Quote(target) + " (targets: " +
                                   Joined(targets::DescriptionNames()) + ")");
    }
    const std::string_view field_name =
        dot == std::string_view::npos ? std::string_view() : key.substr(dot + 1);
    const FieldName* field = nullptr;
    for (const FieldName& f : kFields) {
      if (f.name == field_name) field = &f;
    }
    if (field == nullptr) {
      throw hlo::Error(key_at, "unknown field " + Quote(field_name) + " in " + Quote(key) +
                                   " (fields: " + FieldNames() + ")");
    }
    auto [first, inserted] = seen.emplace(std::string(key), line_number);
    if (!inserted) {
      throw hlo::Error(key_at, Quote(key) + " is set twice (first on line " +
                                   std::to_string(first->second) + ")");
    }
    Price& price = table[target];
    switch (field->field) {
      case Field::kUsdPerHour:
        price.usd_per_hour = ParseUsd(WithoutComment(value), value_at, key);
        // A new figure without its own `source` line is cited by where it was set.
        if (seen.count(target + ".source") == 0) {
          price.source = filename + ":" + std::to_string(line_number);
        }
        break;
      case Field::kSource:
        if (value.empty()) throw hlo::Error(value_at, "empty value for " + Quote(key));
        price.source = std::string(value);
        break;
    }
  }
}

PriceTable LoadPrices(const std::string& path) {
  auto at_file = hlo::SourceLocation{std::make_shared<const std::string>(path), 0, 0};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw hlo::Error(at_file, "cannot read the price file: " + ec.message());
  if (size > static_cast<uintmax_t>(kMaxPriceFileBytes)) {
    throw hlo::Error(at_file, "price file is larger than " + std::to_string(kMaxPriceFileBytes) +
                                  " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hlo::Error(at_file, "cannot read the price file");
  std::stringstream text;
  text << in.rdbuf();
  PriceTable table = DefaultPrices();
  ApplyPriceText(table, text.str(), path);
  return table;
}

std::optional<double> CostPerMillion(double latency_seconds, const Price& price) {
  if (!price.usd_per_hour) return std::nullopt;
  return latency_seconds * 1e6 * *price.usd_per_hour / 3600.0;
}

}  // namespace report
