// The GPU artifact's manifest as JSON: nlohmann-json documents, read with the checks and the
// field-naming messages the artifact format promises.
//
// Guarantees: ParseJson accepts RFC 8259 JSON and never crashes on bad text: every error is a
// gpu::ArtifactError, naming the byte offset for malformed text. It also refuses what
// nlohmann-json alone would take silently: a duplicate member (the manifest would mean two
// things) and nesting deeper than kMaxJsonDepth (the writer never nests more than a few levels).
// Integers stay exact (int64), because arena offsets must not pass through a double; AsInt
// refuses one beyond int64 (the library reads a longer literal as a double, which AsInt refuses
// as not an integer). The accessors name the field in their message, so a corrupt manifest says
// which field is wrong.
//
// nlohmann-json is header-only: the thin runtime builds on a GPU machine where nothing can be
// installed with a copy of the header that tests/gpu/device_check.sh --prepare brings along.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpu {

// Every malformed, truncated, corrupt or unsupported artifact is reported with this exception.
class ArtifactError : public std::runtime_error {
 public:
  explicit ArtifactError(const std::string& message) : std::runtime_error(message) {}
};

using Json = nlohmann::ordered_json;

inline constexpr int kMaxJsonDepth = 64;

// Parses one JSON document (surrounding whitespace allowed). Throws ArtifactError.
Json ParseJson(std::string_view text);

// The manifest's text: two-space indents, `"key": value`, no trailing newline.
std::string JsonText(const Json& document);

// Typed access; `what` names the field in the message when the kind is wrong
// ("manifest: 'steps[0].m' must be an integer, not a number").
bool AsBool(const Json& value, std::string_view what);
int64_t AsInt(const Json& value, std::string_view what);
double AsDouble(const Json& value, std::string_view what);  // any number
const std::string& AsString(const Json& value, std::string_view what);
const Json::array_t& AsArray(const Json& value, std::string_view what);

// Members of an object `where`: Get throws when absent ("manifest: 'steps[0]' lacks member 'n'"),
// Find returns null.
const Json& Get(const Json& object, std::string_view key, std::string_view where);
const Json* Find(const Json& object, std::string_view key);

}  // namespace gpu
