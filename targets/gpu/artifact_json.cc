// The manifest's JSON reader and writer (see artifact_json.h for what it guarantees).
#include "targets/gpu/artifact_json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpu {
namespace {

// Deep nesting is never produced by the writer; bounding it keeps the recursive reader from
// exhausting the stack on hostile input.
constexpr int kMaxDepth = 64;

const char* KindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull: return "null";
    case JsonValue::Kind::kBool: return "a boolean";
    case JsonValue::Kind::kNumber: return "a number";
    case JsonValue::Kind::kString: return "a string";
    case JsonValue::Kind::kArray: return "an array";
    case JsonValue::Kind::kObject: return "an object";
  }
  return "?";
}

[[noreturn]] void WrongKind(std::string_view what, const char* expected, JsonValue::Kind got) {
  throw ArtifactError("manifest: '" + std::string(what) + "' must be " + expected + ", not " +
                      KindName(got));
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  JsonValue Document() {
    JsonValue value = Value(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the JSON document");
    return value;
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw ArtifactError("manifest JSON at byte " + std::to_string(pos_) + ": " + message);
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void Expect(char c) {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  JsonValue Value(int depth) {
    if (depth > kMaxDepth) Fail("nesting deeper than " + std::to_string(kMaxDepth));
    SkipSpace();
    if (pos_ >= text_.size()) Fail("unexpected end of text");
    const char c = text_[pos_];
    if (c == '{') return ObjectValue(depth);
    if (c == '[') return ArrayValue(depth);
    if (c == '"') return JsonValue::String(StringText());
    if (Consume("true")) return JsonValue::Bool(true);
    if (Consume("false")) return JsonValue::Bool(false);
    if (Consume("null")) return JsonValue();
    if (c == '-' || (c >= '0' && c <= '9')) return Number();
    Fail(std::string("unexpected character '") + c + "'");
  }

  JsonValue ObjectValue(int depth) {
    ++pos_;  // '{'
    JsonValue object = JsonValue::Object();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') { ++pos_; return object; }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') Fail("expected a member name");
      const size_t key_at = pos_;
      std::string key = StringText();
      if (object.Find(key) != nullptr) {
        pos_ = key_at;  // point at the repeated name, not past it
        Fail("duplicate member '" + key + "'");
      }
      Expect(':');
      object.Set(std::move(key), Value(depth + 1));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') { ++pos_; continue; }
      Expect('}');
      return object;
    }
  }

  JsonValue ArrayValue(int depth) {
    ++pos_;  // '['
    JsonValue array = JsonValue::Array();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') { ++pos_; return array; }
    while (true) {
      array.Push(Value(depth + 1));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') { ++pos_; continue; }
      Expect(']');
      return array;
    }
  }

  std::string StringText() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) Fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in string");
      if (c != '\\') { out += c; continue; }
      if (pos_ >= text_.size()) Fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': AppendUtf8(HexCodeUnit(), out); break;
        default: Fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }
  unsigned HexCodeUnit() {
    if (pos_ + 4 > text_.size()) Fail("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      value <<= 4;
      if (h >= '0' && h <= '9') value |= h - '0';
      else if (h >= 'a' && h <= 'f') value |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') value |= h - 'A' + 10;
      else Fail("bad hex digit in \\u escape");
    }
    return value;
  }
  static void AppendUtf8(unsigned cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  JsonValue Number() {
    const size_t start = pos_;
    bool integer = true;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == from) Fail("malformed number");
    };
    digits();
    if (pos_ < text_.size() && text_[pos_] == '.') { integer = false; ++pos_; digits(); }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integer = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      digits();
    }
    const std::string token(text_.substr(start, pos_ - start));
    if (integer) {
      errno = 0;
      char* end = nullptr;
      const long long value = std::strtoll(token.c_str(), &end, 10);
      if (errno == ERANGE) Fail("integer " + token + " does not fit in 64 bits");
      return JsonValue::Int(value);
    }
    return JsonValue::Double(std::strtod(token.c_str(), nullptr));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void AppendQuoted(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

bool IsScalar(const JsonValue& v) {
  return v.kind() != JsonValue::Kind::kArray && v.kind() != JsonValue::Kind::kObject;
}

}  // namespace

JsonValue JsonValue::Bool(bool b) { JsonValue v; v.kind_ = Kind::kBool; v.bool_ = b; return v; }
JsonValue JsonValue::Int(int64_t i) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.is_integer_ = true;
  v.int_ = i;
  v.double_ = static_cast<double>(i);
  return v;
}
JsonValue JsonValue::Double(double d) { JsonValue v; v.kind_ = Kind::kNumber; v.double_ = d; return v; }
JsonValue JsonValue::String(std::string s) {
  JsonValue v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(s);
  return v;
}
JsonValue JsonValue::Array(std::vector<JsonValue> items) {
  JsonValue v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}
JsonValue JsonValue::Object() { JsonValue v; v.kind_ = Kind::kObject; return v; }

bool JsonValue::AsBool(std::string_view what) const {
  if (kind_ != Kind::kBool) WrongKind(what, "a boolean", kind_);
  return bool_;
}
int64_t JsonValue::AsInt(std::string_view what) const {
  if (kind_ != Kind::kNumber || !is_integer_) WrongKind(what, "an integer", kind_);
  return int_;
}
double JsonValue::AsDouble(std::string_view what) const {
  if (kind_ != Kind::kNumber) WrongKind(what, "a number", kind_);
  return double_;
}
const std::string& JsonValue::AsString(std::string_view what) const {
  if (kind_ != Kind::kString) WrongKind(what, "a string", kind_);
  return string_;
}
const std::vector<JsonValue>& JsonValue::AsArray(std::string_view what) const {
  if (kind_ != Kind::kArray) WrongKind(what, "an array", kind_);
  return items_;
}

JsonValue& JsonValue::Set(std::string key, JsonValue value) {
  for (auto& [k, v] : members_) {
    if (k == key) { v = std::move(value); return v; }
  }
  members_.emplace_back(std::move(key), std::move(value));
  return members_.back().second;
}
JsonValue& JsonValue::Push(JsonValue value) {
  items_.push_back(std::move(value));
  return items_.back();
}
const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}
const JsonValue& JsonValue::Get(std::string_view key, std::string_view where) const {
  if (kind_ != Kind::kObject) WrongKind(where, "an object", kind_);
  const JsonValue* v = Find(key);
  if (v == nullptr) {
    throw ArtifactError("manifest: '" + std::string(where) + "' lacks member '" + std::string(key) + "'");
  }
  return *v;
}

std::string JsonValue::ToText(int indent) const {
  std::string out;
  switch (kind_) {
    case Kind::kNull: return "null";
    case Kind::kBool: return bool_ ? "true" : "false";
    case Kind::kNumber: {
      if (is_integer_) return std::to_string(int_);
      if (!std::isfinite(double_)) return "null";  // JSON has no inf/nan
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", double_);
      return buf;
    }
    case Kind::kString: AppendQuoted(string_, out); return out;
    case Kind::kArray: {
      bool all_scalar = true;
      for (const auto& item : items_) all_scalar = all_scalar && IsScalar(item);
      const std::string pad(indent + 2, ' ');
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out += all_scalar ? ", " : ",";
        if (!all_scalar) {
          out += '\n';
          out += pad;
        }
        out += items_[i].ToText(indent + 2);
      }
      if (!all_scalar && !items_.empty()) {
        out += '\n';
        out.append(indent, ' ');
      }
      out += ']';
      return out;
    }
    case Kind::kObject: {
      const std::string pad(indent + 2, ' ');
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        out += i > 0 ? ",\n" : "\n";
        out += pad;
        AppendQuoted(members_[i].first, out);
        out += ": ";
        out += members_[i].second.ToText(indent + 2);
      }
      if (!members_.empty()) {
        out += '\n';
        out.append(indent, ' ');
      }
      out += '}';
      return out;
    }
  }
  return out;
}

JsonValue ParseJson(std::string_view text) { return Reader(text).Document(); }

}  // namespace gpu
