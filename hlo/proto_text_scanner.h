// A cursor over the text of XLA's printed attributes and tables, for the proto writer's mapping
// of text onto XLA's fields (proto_opaque_text.cc, proto_stack_frames.cc). Internal to hlo/.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace hlo::proto_internal {

// A cursor over attribute text. Every Parse* returns false (never throws) on unexpected input,
// which simply means "keep the text verbatim only".
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}
  bool AtEnd() const { return pos_ >= text_.size(); }
  // Spaces and /* comments */ (XLA's printer puts /*index=N*/ before every fifth element of a
  // tuple sharding).
  void SkipSpaces() {
    while (!AtEnd()) {
      if (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t') {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "/*") {
        const size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) return;  // the next Consume fails on it
        pos_ = close + 2;
      } else {
        return;
      }
    }
  }
  bool Consume(std::string_view token) {
    SkipSpaces();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  bool Peek(char c) {
    SkipSpaces();
    return !AtEnd() && text_[pos_] == c;
  }
  bool ParseIdentifier(std::string* out) {
    SkipSpaces();
    size_t start = pos_;
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                        text_[pos_] == '_' || text_[pos_] == '-' || text_[pos_] == '.')) {
      ++pos_;
    }
    *out = std::string(text_.substr(start, pos_ - start));
    return !out->empty();
  }
  bool ParseInt(int64_t* out) {
    SkipSpaces();
    size_t start = pos_;
    if (!AtEnd() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits || pos_ - digits > 18) return false;  // no overflow: at most 18 digits
    *out = std::stoll(std::string(text_.substr(start, pos_ - start)));
    return true;
  }
  // `"..."` with C escapes (\n \t \r \\ \" \' \ooo \xHH).
  bool ParseString(std::string* out) {
    if (!Consume("\"")) return false;
    out->clear();
    while (!AtEnd()) {
      char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (AtEnd()) return false;
      char e = text_[pos_++];
      switch (e) {
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case '\\': case '"': case '\'': case '?': out->push_back(e); break;
        case 'x': {
          int value = 0, n = 0;
          while (!AtEnd() && n < 2 && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
            value = value * 16 + std::stoi(std::string(1, text_[pos_++]), nullptr, 16);
            ++n;
          }
          if (n == 0) return false;
          out->push_back(static_cast<char>(value));
          break;
        }
        default: {
          if (e < '0' || e > '7') return false;
          int value = e - '0';
          for (int n = 1; n < 3 && !AtEnd() && text_[pos_] >= '0' && text_[pos_] <= '7'; ++n) {
            value = value * 8 + (text_[pos_++] - '0');
          }
          out->push_back(static_cast<char>(value));
        }
      }
    }
    return false;
  }
  // `[1,2,3]` or `{1,2,3}` (possibly empty).
  bool ParseIntList(char open, char close, std::vector<int64_t>* out) {
    out->clear();
    if (!Consume(std::string(1, open))) return false;
    if (Consume(std::string(1, close))) return true;
    do {
      int64_t v;
      if (!ParseInt(&v)) return false;
      out->push_back(v);
    } while (Consume(","));
    return Consume(std::string(1, close));
  }
  bool Finished() {
    SkipSpaces();
    return AtEnd();
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace hlo::proto_internal
