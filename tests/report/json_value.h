// A minimal JSON reader for the report tests: parses RFC 8259 text into a tree of JsonValue so
// tests can check the report's keys and figures without a JSON library dependency. Throws
// std::runtime_error on malformed input (a test failure, never a crash). Test-only code.
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}
  JsonValue Parse() {
    JsonValue value = Value();
    Space();
    if (pos_ != text_.size()) Fail("trailing text");
    return value;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void Space() {
    while (pos_ < text_.size() && std::string(" \t\r\n").find(text_[pos_]) != std::string::npos) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    Space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(std::string("expected '") + c + "'");
  }
  bool Word(const char* word) {
    const std::string w(word);
    if (text_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) Fail("bad escape");
      char e = text_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u':
          if (pos_ + 4 > text_.size()) Fail("bad \\u escape");
          {
            // ASCII code points decode exactly; the tests never need others, shown as '?'.
            const unsigned long code = std::strtoul(text_.substr(pos_, 4).c_str(), nullptr, 16);
            out += code < 0x80 ? static_cast<char>(code) : '?';
          }
          pos_ += 4;
          break;
        case '"': case '\\': case '/': out += e; break;
        default: Fail("bad escape");
      }
    }
    Expect('"');
    return out;
  }
  JsonValue Value() {
    Space();
    if (pos_ >= text_.size()) Fail("unexpected end");
    JsonValue v;
    const char c = text_[pos_];
    if (c == '{') {
      v.kind = JsonValue::Kind::kObject;
      ++pos_;
      if (Eat('}')) return v;
      do {
        Space();
        std::string key = String();
        Expect(':');
        v.object.push_back(JsonMember{std::move(key), Value()});
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      v.kind = JsonValue::Kind::kArray;
      ++pos_;
      if (Eat(']')) return v;
      do v.array.push_back(Value());
      while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.string = String();
    } else if (Word("null")) {
      v.kind = JsonValue::Kind::kNull;
    } else if (Word("true") || Word("false")) {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
    } else {
      v.kind = JsonValue::Kind::kNumber;
      const char* begin = text_.c_str() + pos_;
      char* end = nullptr;
      v.number = std::strtod(begin, &end);
      if (end == begin) Fail("bad value");
      pos_ += static_cast<size_t>(end - begin);
    }
    return v;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

inline JsonValue ParseJson(const std::string& text) { return JsonReader(text).Parse(); }

}  // namespace report_test
