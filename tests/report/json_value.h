// JSON for the report tests: RFC 8259 text parsed by nlohmann-json into a tree of JsonValue, so
// tests check the report's keys and figures through plain structs. Throws std::runtime_error on
// malformed input (a test failure, never a crash). Test-only code.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace report_test {

struct JsonMember;

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  // In document order. A struct declared after JsonValue rather than std::pair: a pair of an
  // incomplete type cannot be checked for destructibility (clang refuses what GCC lets pass).
  std::vector<JsonMember> object;

  bool Has(const std::string& key) const;
  const JsonValue& operator[](const std::string& key) const;
  std::vector<std::string> Keys() const;
};

struct JsonMember {
  std::string first;  // the key
  JsonValue second;   // the value
};

inline bool JsonValue::Has(const std::string& key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return true;
  }
  return false;
}

inline const JsonValue& JsonValue::operator[](const std::string& key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return v;
  }
  throw std::runtime_error("missing key " + key);
}

inline std::vector<std::string> JsonValue::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [k, v] : object) keys.push_back(k);
  return keys;
}

// Parses with nlohmann-json (the library the project writes its JSON with) and copies the tree
// into JsonValue, keeping the members' document order.
inline JsonValue FromLibrary(const nlohmann::ordered_json& json) {
  JsonValue v;
  if (json.is_null()) {
    v.kind = JsonValue::Kind::kNull;
  } else if (json.is_boolean()) {
    v.kind = JsonValue::Kind::kBool;
    v.boolean = json.get<bool>();
  } else if (json.is_number()) {
    v.kind = JsonValue::Kind::kNumber;
    v.number = json.get<double>();
  } else if (json.is_string()) {
    v.kind = JsonValue::Kind::kString;
    v.string = json.get<std::string>();
  } else if (json.is_array()) {
    v.kind = JsonValue::Kind::kArray;
    for (const auto& item : json) v.array.push_back(FromLibrary(item));
  } else {
    v.kind = JsonValue::Kind::kObject;
    for (const auto& [key, value] : json.items()) v.object.push_back({key, FromLibrary(value)});
  }
  return v;
}

inline JsonValue ParseJson(const std::string& text) {
  try {
    return FromLibrary(nlohmann::ordered_json::parse(text));
  } catch (const nlohmann::json::parse_error& error) {
    throw std::runtime_error(std::string("JSON: ") + error.what());
  }
}

}  // namespace report_test
