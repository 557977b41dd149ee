// HLO text lexer: a cursor over a string_view of the whole input that hands the parser tokens
// (names, integers, numbers, punctuation, strings, raw attribute values) and tracks line/column.
//
// Guarantees:
//  - No per-token heap allocation: tokens are string_views into the input.
//  - Whitespace, `// ...` and `/* ... */` comments (including `/*index=N*/`) are trivia, skipped
//    before every token.
//  - Every failure is an hlo::Error at the file:line:col of the offending character; the lexer
//    never reads past the end of its range and never recurses.
//  - A lexer can be restricted to a sub-range of the input (a raw attribute value) and still
//    reports positions in the original file, so attribute sub-parsers give exact locations.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hlo/diagnostic.h"

namespace hlo {

// A position inside the input; cheap to copy, converted to a SourceLocation on demand.
struct LexPosition {
  size_t offset = 0;
  uint32_t line = 1;
  size_t line_start = 0;  // offset of the first character of `line`
};

// A raw slice of the input together with where it starts (for sub-lexers and error locations).
struct RawText {
  std::string_view text;
  LexPosition start;
};

class Lexer {
 public:
  Lexer(std::string_view input, std::shared_ptr<const std::string> file);
  // A lexer over `raw`, a slice of the same input; positions stay relative to the whole file.
  Lexer(std::string_view input, std::shared_ptr<const std::string> file, const RawText& raw);

  // Skips whitespace and comments. Throws on an unterminated /* comment.
  void SkipTrivia();
  bool AtEnd();             // after trivia
  char Peek();              // after trivia; '\0' at end
  char PeekAt(size_t ahead) const;  // raw character `ahead` bytes past the cursor, no trivia
  bool TryConsume(char c);  // after trivia
  bool TryConsume(std::string_view literal);  // after trivia; exact characters
  void Expect(char c, std::string_view context);
  void Expect(std::string_view literal, std::string_view context);

  // A name-like token: [A-Za-z0-9_.$-]+ with an optional leading '%' (stripped). Used for
  // instruction/computation names, opcodes, keywords and enum values.
  std::string_view Name(std::string_view what);
  bool PeekNameStart();  // after trivia: does a Name start here?
  // Signed decimal integer that fits int64.
  int64_t Integer(std::string_view what);
  // A literal number token (sign, digits, '.', exponent, or inf/nan words) as text.
  std::string_view NumberText(std::string_view what);
  // A double-quoted string with C escapes; returns the decoded contents.
  std::string QuotedString(std::string_view what);
  // The raw text of an attribute value: up to the first ',' whitespace or unmatched closing
  // bracket at nesting depth 0, with brackets and quoted strings balanced. May be empty.
  RawText RawValue();
  // Everything from the cursor (after trivia) to the end of the range, trailing space trimmed.
  std::string_view Rest();
  // Moves the cursor past the end of the current line (no trivia skipped, strings not parsed).
  void SkipRestOfLine();

  LexPosition position() const { return pos_; }
  SourceLocation Location() const { return LocationOf(pos_); }
  SourceLocation LocationOf(const LexPosition& p) const;
  // Location of the next token (skips trivia first).
  SourceLocation TokenLocation();
  [[noreturn]] void Fail(std::string message) const;
  [[noreturn]] void FailAt(const LexPosition& p, std::string message) const;
  std::string_view input() const { return input_; }
  const std::shared_ptr<const std::string>& file() const { return file_; }

 private:
  void Advance();  // one character, tracking newlines
  std::string Describe(char c) const;
  [[noreturn]] void FailUnexpected(std::string_view expected);

  std::string_view input_;
  size_t end_;
  std::shared_ptr<const std::string> file_;
  LexPosition pos_;
};

// Escapes a string for printing inside double quotes (inverse of Lexer::QuotedString).
std::string EscapeString(std::string_view s);

}  // namespace hlo
