// The price table of the portability report: US dollars per hour of one device of each target,
// with where the figure comes from, and the `--prices FILE` format that overrides it.
//
// Defaults are compiled in from each TargetDescription's price_per_hour_usd (the numbers and
// their sources are in targets/*/description.cc; the citation text is repeated in prices.cc and in
// examples/prices.cfg, and a test checks the three agree).
//
// File format (docs/report.md): `key = value` lines like the accelerator's config files; a line
// whose first non-blank character is `#` or `;` is a comment; keys are `TARGET.usd_per_hour`
// (a number >= 0, at most 1e6, optionally followed by a `#` or `;` comment) and `TARGET.source`
// (free text to the end of the line: a citation may contain `;`). A file overrides per target; targets it does not name keep their
// defaults. Every bad line is an hlo::Error at FILE:LINE:COL: unknown target (the message lists
// the valid ones), unknown field, missing '=', a value that is not a number or out of range, a
// key given twice. Files larger than kMaxPriceFileBytes are refused before they are read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include "targets/descriptions.h"

namespace report {

struct Price {
  std::optional<double> usd_per_hour;  // unset: the target has no price (cost is null)
  std::string source;                  // citation, or "FILE:LINE" of the override
};

// Target name -> price, for every target of targets::DescriptionNames().
using PriceTable = std::map<std::string, Price>;

inline constexpr int64_t kMaxPriceFileBytes = int64_t{1} << 20;

// The compiled-in defaults: price_per_hour_usd of each TargetDescription (0 = no price) with its
// citation.
PriceTable DefaultPrices();

// Applies the `key = value` lines of `text` (named `filename` in errors) on top of `table`.
void ApplyPriceText(PriceTable& table, std::string_view text, const std::string& filename);

// DefaultPrices() overridden by the file at `path` (hlo::Error when it cannot be read).
PriceTable LoadPrices(const std::string& path);

// Cost of one million inferences at `latency_seconds` each: latency_s * 1e6 * usd_per_hour /
// 3600; unset when the price is unknown.
std::optional<double> CostPerMillion(double latency_seconds, const Price& price);

}  // namespace report
