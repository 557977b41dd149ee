// JSON pieces shared by every writer of JSON in Retarget (compile stats, run stats, the report,
// simulator stats and traces): one number rule, so all outputs agree. The documents themselves
// are nlohmann::ordered_json trees; the text helpers serve writers of other formats that embed
// JSON values (the sweep page's script, VCD comments, messages).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hlo {

// A JSON string literal: quotes, backslashes and control characters escaped; valid UTF-8 kept;
// each byte of invalid UTF-8 replaced by U+FFFD (so the output is always valid JSON).
std::string JsonString(std::string_view text);

// The shortest decimal that reads back to exactly `value`; NaN and infinities become null.
std::string JsonNumber(double value);

// `value` as a JSON value: null for NaN and infinities (JSON has none), an integer when it is
// one below 2^53 in magnitude (a count stored in a double reads "3", not "3.0"), else the double,
// which nlohmann-json prints as the shortest decimal that reads back to it.
nlohmann::ordered_json JsonNumberValue(double value);

// A document's text as the project writes its files: `indent` spaces an indent with
// `"key": value` (-1: all on one line, as trace events are), bytes that are not UTF-8 replaced
// by U+FFFD (never an exception). No trailing newline.
std::string JsonText(const nlohmann::ordered_json& document, int indent = 2);

}  // namespace hlo
