// A minimal JSON value, reader and writer for the GPU artifact's manifest.
//
// Guarantees: plain C++17, standard library only (the thin runtime builds on a GPU machine from
// targets/gpu alone). The reader accepts RFC 8259 JSON, bounds nesting depth and never crashes on
// bad text: every error is a gpu::ArtifactError naming the byte offset. Integers are kept exact
// (int64) next to their double value, because arena offsets must not pass through a double.
// Not a general JSON library: no \u surrogate pairs beyond the BMP, objects keep insertion order
// and reject duplicate keys.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpu {

// Every malformed, truncated, corrupt or unsupported artifact is reported with this exception.
class ArtifactError : public std::runtime_error {
 public:
  explicit ArtifactError(const std::string& message) : std::runtime_error(message) {}
};

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  static JsonValue Bool(bool b);
  static JsonValue Int(int64_t i);
  static JsonValue Double(double d);
  static JsonValue String(std::string s);
  static JsonValue Array(std::vector<JsonValue> items = {});
  static JsonValue Object();

  Kind kind() const { return kind_; }
  bool is_integer() const { return kind_ == Kind::kNumber && is_integer_; }

  // Typed accessors; `what` names the field in the error message when the kind is wrong.
  bool AsBool(std::string_view what) const;
  int64_t AsInt(std::string_view what) const;
  double AsDouble(std::string_view what) const;
  const std::string& AsString(std::string_view what) const;
  const std::vector<JsonValue>& AsArray(std::string_view what) const;

  // Objects: Set appends (or replaces), Find returns null when absent, Get throws when absent.
  JsonValue& Set(std::string key, JsonValue value);
  JsonValue& Push(JsonValue value);  // arrays
  const JsonValue* Find(std::string_view key) const;
  const JsonValue& Get(std::string_view key, std::string_view where) const;
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }

  // Compact-but-readable text: objects one member per line, arrays of scalars on one line.
  std::string ToText(int indent = 0) const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  bool is_integer_ = false;
  int64_t int_ = 0;
  double double_ = 0.0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses one JSON document (surrounding whitespace allowed). Throws ArtifactError.
JsonValue ParseJson(std::string_view text);

}  // namespace gpu
