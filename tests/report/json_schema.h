// A JSON Schema checker for the subset docs/report.schema.json uses (test-only): $ref to
// "#/$defs/NAME", type (a name or a list; "integer" = a number without a fraction), enum,
// properties, required, additionalProperties (false or a schema), propertyNames, items,
// minimum, maximum, pattern. Annotations ($schema, $id, title, description) are skipped; any
// other keyword throws, so the schema cannot rely on a rule this checker would silently ignore.
// Validate() returns every violation as "PATH: what", empty when the document conforms.
#pragma once

#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/report/json_value.h"

namespace report_test {

class SchemaChecker {
 public:
  explicit SchemaChecker(const JsonValue& schema) : root_(schema) {}

  std::vector<std::string> Validate(const JsonValue& document) {
    errors_.clear();
    Check(document, root_, "$");
    return errors_;
  }

 private:
  static std::string KindName(const JsonValue& v) {
    switch (v.kind) {
      case JsonValue::Kind::kNull: return "null";
      case JsonValue::Kind::kBool: return "boolean";
      case JsonValue::Kind::kNumber: return "number";
      case JsonValue::Kind::kString: return "string";
      case JsonValue::Kind::kArray: return "array";
      case JsonValue::Kind::kObject: return "object";
    }
    return "?";
  }
  static bool IsType(const JsonValue& v, const std::string& type) {
    if (type == "integer") {
      return v.kind == JsonValue::Kind::kNumber && std::floor(v.number) == v.number;
    }
    return KindName(v) == type;
  }
  static bool Equal(const JsonValue& a, const JsonValue& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
      case JsonValue::Kind::kNull: return true;
      case JsonValue::Kind::kBool: return a.boolean == b.boolean;
      case JsonValue::Kind::kNumber: return a.number == b.number;
      case JsonValue::Kind::kString: return a.string == b.string;
      case JsonValue::Kind::kArray:
      case JsonValue::Kind::kObject: return false;  // not used in enums here
    }
    return false;
  }

  const JsonValue& Resolve(const std::string& ref) {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
    return root_["$defs"][ref.substr(prefix.size())];
  }

  void Fail(const std::string& path, const std::string& what) { errors_.push_back(path + ": " + what); }

  void Check(const JsonValue& v, const JsonValue& schema, const std::string& path) {
    static const std::set<std::string> kAnnotations = {"$schema", "$id", "title", "description",
                                                       "$defs"};
    for (const auto& [keyword, rule] : schema.object) {
      if (kAnnotations.count(keyword)) continue;
      if (keyword == "$ref") {
        Check(v, Resolve(rule.string), path);
      } else if (keyword == "type") {
        std::vector<std::string> types;
        if (rule.kind == JsonValue::Kind::kString) types.push_back(rule.string);
        for (const JsonValue& t : rule.array) types.push_back(t.string);
        bool ok = false;
        for (const std::string& t : types) ok = ok || IsType(v, t);
        if (!ok) Fail(path, "is " + KindName(v) + ", not of the schema's type");
      } else if (keyword == "enum") {
        bool ok = false;
        for (const JsonValue& option : rule.array) ok = ok || Equal(v, option);
        if (!ok) Fail(path, "is not one of the enum values");
      } else if (keyword == "minimum") {
        if (v.kind == JsonValue::Kind::kNumber && v.number < rule.number) Fail(path, "below minimum");
      } else if (keyword == "maximum") {
        if (v.kind == JsonValue::Kind::kNumber && v.number > rule.number) Fail(path, "above maximum");
      } else if (keyword == "pattern") {
        if (v.kind == JsonValue::Kind::kString && !std::regex_search(v.string, std::regex(rule.string))) {
          Fail(path, "'" + v.string + "' does not match " + rule.string);
        }
      } else if (keyword == "required") {
        if (v.kind != JsonValue::Kind::kObject) continue;
        for (const JsonValue& key : rule.array) {
          if (!v.Has(key.string)) Fail(path, "missing required key " + key.string);
        }
      } else if (keyword == "properties") {
        if (v.kind != JsonValue::Kind::kObject) continue;
        for (const auto& [key, sub] : rule.object) {
          if (v.Has(key)) Check(v[key], sub, path + "." + key);
        }
      } else if (keyword == "additionalProperties") {
        if (v.kind != JsonValue::Kind::kObject) continue;
        for (const auto& [key, value] : v.object) {
          if (schema.Has("properties") && schema["properties"].Has(key)) continue;
          if (rule.kind == JsonValue::Kind::kBool) {
            if (!rule.boolean) Fail(path, "unexpected key " + key);
          } else {
            Check(value, rule, path + "." + key);
          }
        }
      } else if (keyword == "propertyNames") {
        if (v.kind != JsonValue::Kind::kObject) continue;
        for (const auto& [key, value] : v.object) {
          JsonValue name;
          name.kind = JsonValue::Kind::kString;
          name.string = key;
          Check(name, rule, path + "[key " + key + "]");
        }
      } else if (keyword == "items") {
        if (v.kind != JsonValue::Kind::kArray) continue;
        for (size_t i = 0; i < v.array.size(); ++i) {
          Check(v.array[i], rule, path + "[" + std::to_string(i) + "]");
        }
      } else {
        throw std::runtime_error("the checker does not support keyword " + keyword);
      }
    }
  }

  const JsonValue& root_;
  std::vector<std::string> errors_;
};

}  // namespace report_test
