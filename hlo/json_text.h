// JSON text pieces shared by every writer of JSON in Retarget (compile stats, run stats, the
// report): one escaping rule and one number rule, so all outputs are valid JSON and agree.
#pragma once

#include <string>
#include <string_view>

namespace hlo {

// A JSON string literal: quotes, backslashes and control characters escaped; valid UTF-8 kept;
// each byte of invalid UTF-8 replaced by U+FFFD (so the output is always valid JSON).
std::string JsonString(std::string_view text);

// The shortest decimal that reads back to exactly `value`; NaN and infinities become null.
std::string JsonNumber(double value);

}  // namespace hlo
