// HLO text lexer (see lexer.h for the guarantees).
#include "hlo/lexer.h"

#include <charconv>

namespace hlo {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool IsNameChar(char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

Lexer::Lexer(std::string_view input, std::shared_ptr<const std::string> file)
    : input_(input), end_(input.size()), file_(std::move(file)) {}

Lexer::Lexer(std::string_view input, std::shared_ptr<const std::string> file, const RawText& raw)
    : input_(input), file_(std::move(file)), pos_(raw.start) {
  end_ = raw.start.offset + raw.text.size();
}

void Lexer::Advance() {
  if (input_[pos_.offset] == '\n') {
    ++pos_.line;
    pos_.line_start = pos_.offset + 1;
  }
  ++pos_.offset;
}

void Lexer::SkipTrivia() {
  while (pos_.offset < end_) {
    char c = input_[pos_.offset];
    if (IsSpace(c)) {
      Advance();
    } else if (c == '/' && pos_.offset + 1 < end_ && input_[pos_.offset + 1] == '/') {
      while (pos_.offset < end_ && input_[pos_.offset] != '\n') ++pos_.offset;
    } else if (c == '/' && pos_.offset + 1 < end_ && input_[pos_.offset + 1] == '*') {
      LexPosition start = pos_;
      size_t close = input_.substr(0, end_).find("*/", pos_.offset + 2);
      if (close == std::string_view::npos) FailAt(start, "unterminated /* comment");
      while (pos_.offset < close + 2) Advance();
    } else {
      return;
    }
  }
}

bool Lexer::AtEnd() {
  SkipTrivia();
  return pos_.offset >= end_;
}

char Lexer::Peek() {
  SkipTrivia();
  return pos_.offset < end_ ? input_[pos_.offset] : '\0';
}

char Lexer::PeekAt(size_t ahead) const {
  size_t at = pos_.offset + ahead;
  return at < end_ ? input_[at] : '\0';
}

bool Lexer::TryConsume(char c) {
  if (Peek() != c) return false;
  Advance();
  return true;
}

bool Lexer::TryConsume(std::string_view literal) {
  SkipTrivia();
  if (input_.substr(0, end_).substr(pos_.offset).starts_with(literal)) {
    for (size_t i = 0; i < literal.size(); ++i) Advance();
    return true;
  }
  return false;
}

void Lexer::Expect(char c, std::string_view context) {
  if (!TryConsume(c)) {
    std::string expected = "'";
    expected += c;
    expected += "' ";
    expected += context;
    FailUnexpected(expected);
  }
}

void Lexer::Expect(std::string_view literal, std::string_view context) {
  if (!TryConsume(literal)) {
    FailUnexpected("'" + std::string(literal) + "' " + std::string(context));
  }
}

bool Lexer::PeekNameStart() {
  char c = Peek();
  return IsNameStart(c) || (c == '%' && IsNameStart(PeekAt(1)));
}

std::string_view Lexer::Name(std::string_view what) {
  SkipTrivia();
  size_t start = pos_.offset;
  if (start < end_ && input_[start] == '%') ++start;
  if (start >= end_ || !IsNameStart(input_[start])) FailUnexpected(what);
  size_t i = start;
  while (i < end_ && IsNameChar(input_[i])) ++i;
  pos_.offset = i;  // names never contain newlines
  return input_.substr(start, i - start);
}

int64_t Lexer::Integer(std::string_view what) {
  SkipTrivia();
  LexPosition start = pos_;
  size_t i = pos_.offset;
  if (i < end_ && (input_[i] == '-' || input_[i] == '+')) ++i;
  if (i >= end_ || !IsDigit(input_[i])) FailUnexpected(what);
  while (i < end_ && IsDigit(input_[i])) ++i;
  size_t first = pos_.offset + (input_[pos_.offset] == '+' ? 1 : 0);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(input_.data() + first, input_.data() + i, value);
  if (ec != std::errc() || ptr != input_.data() + i) {
    FailAt(start, "integer '" + std::string(input_.substr(pos_.offset, i - pos_.offset)) +
                      "' does not fit in 64 bits");
  }
  pos_.offset = i;
  return value;
}

std::string_view Lexer::NumberText(std::string_view what) {
  SkipTrivia();
  size_t i = pos_.offset;
  if (i < end_ && (input_[i] == '-' || input_[i] == '+')) ++i;
  size_t body = i;
  // Digits, '.', letters (exponent markers and the words inf/nan) and an exponent's sign; the
  // caller decides whether the token is a valid number of its type.
  while (i < end_ && (IsDigit(input_[i]) || input_[i] == '.' || (input_[i] >= 'a' && input_[i] <= 'z') ||
                      (input_[i] >= 'A' && input_[i] <= 'Z') ||
                      ((input_[i] == '-' || input_[i] == '+') && i > body &&
                       (input_[i - 1] == 'e' || input_[i - 1] == 'E')))) {
    ++i;
  }
  if (i == body) FailUnexpected(what);
  std::string_view text = input_.substr(pos_.offset, i - pos_.offset);
  pos_.offset = i;
  return text;
}

std::string Lexer::QuotedString(std::string_view what) {
  SkipTrivia();
  LexPosition start = pos_;
  if (pos_.offset >= end_ || input_[pos_.offset] != '"') FailUnexpected(what);
  Advance();
  std::string out;
  while (true) {
    if (pos_.offset >= end_) FailAt(start, "unterminated string");
    char c = input_[pos_.offset];
    if (c == '"') {
      Advance();
      return out;
    }
    if (c == '\\') {
      Advance();
      if (pos_.offset >= end_) FailAt(start, "unterminated string");
      char e = input_[pos_.offset];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        default: out += e; break;  // \" \\ \' and anything else stand for themselves
      }
      Advance();
      continue;
    }
    out += c;
    Advance();
  }
}

RawText Lexer::RawValue() {
  SkipTrivia();
  RawText raw{{}, pos_};
  int depth = 0;
  while (pos_.offset < end_) {
    char c = input_[pos_.offset];
    if (c == '"') {
      LexPosition string_start = pos_;
      Advance();
      while (pos_.offset < end_ && input_[pos_.offset] != '"') {
        if (input_[pos_.offset] == '\\' && pos_.offset + 1 < end_) Advance();
        Advance();
      }
      if (pos_.offset >= end_) FailAt(string_start, "unterminated string");
      Advance();
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ')' || c == ']') {
      if (depth == 0) break;
      --depth;
    } else if (depth == 0 && (c == ',' || IsSpace(c))) {
      break;
    } else if (c == '/' && pos_.offset + 1 < end_ && input_[pos_.offset + 1] == '*') {
      if (depth == 0) break;
    }
    Advance();
  }
  if (depth != 0) FailAt(raw.start, "unbalanced brackets in attribute value (truncated input?)");
  raw.text = input_.substr(raw.start.offset, pos_.offset - raw.start.offset);
  return raw;
}

void Lexer::SkipRestOfLine() {
  while (pos_.offset < end_ && input_[pos_.offset] != '\n') Advance();
  if (pos_.offset < end_) Advance();
}

std::string_view Lexer::Rest() {
  SkipTrivia();
  size_t end = end_;
  while (end > pos_.offset && IsSpace(input_[end - 1])) --end;
  std::string_view rest = input_.substr(pos_.offset, end - pos_.offset);
  while (pos_.offset < end_) Advance();
  return rest;
}

SourceLocation Lexer::LocationOf(const LexPosition& p) const {
  return SourceLocation{file_, p.line, static_cast<uint32_t>(p.offset - p.line_start + 1)};
}

SourceLocation Lexer::TokenLocation() {
  SkipTrivia();
  return Location();
}

void Lexer::Fail(std::string message) const { throw Error(Location(), std::move(message)); }

void Lexer::FailAt(const LexPosition& p, std::string message) const {
  throw Error(LocationOf(p), std::move(message));
}

std::string Lexer::Describe(char c) const {
  if (pos_.offset >= end_) return "end of input";
  if (c >= 0x20 && c < 0x7f) {
    std::string quoted = "'";
    quoted += c;
    quoted += '\'';
    return quoted;
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

void Lexer::FailUnexpected(std::string_view expected) {
  SkipTrivia();
  char c = pos_.offset < end_ ? input_[pos_.offset] : '\0';
  Fail("expected " + std::string(expected) + ", found " + Describe(c));
}

std::string EscapeString(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default: out += c; break;
    }
  }
  return out;
}

}  // namespace hlo
