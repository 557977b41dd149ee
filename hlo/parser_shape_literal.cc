// Shapes and constant literals of the HLO text format.
//
// Guarantees: every shape returned is well formed (known element type, non-negative dims that fit
// int64, rank <= GlobalLimits().max_rank, layout a permutation of the dims); every literal has
// exactly the elements its shape calls for, checked against CheckAllocationLimit before any
// allocation; nesting is bounded by kMaxNestingDepth, so no input can overflow the stack.
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "hlo/literal.h"
#include "hlo/minifloat.h"
#include "hlo/parser_internal.h"

namespace hlo::parser_internal {
namespace {

// `:T(8,128)(2,1)L(1024)E(4)S(5)` after the minor-to-major list, in XLA's order; any other
// item is an error naming it.
void ParseLayoutDetails(Lexer& lexer, LayoutDetails& details) {
  auto parenthesized_integer = [&lexer](std::string_view what) {
    lexer.Expect('(', what);
    const int64_t value = lexer.Integer(what);
    lexer.Expect(')', what);
    return value;
  };
  if (lexer.TryConsume("T")) {
    do {
      lexer.Expect('(', "to start a layout tile");
      std::vector<int64_t> tile;
      do {
        if (lexer.TryConsume('*')) {
          tile.push_back(LayoutDetails::kCombineDimension);
        } else {
          const int64_t size = lexer.Integer("a tile dimension");
          if (size < 1) lexer.Fail("a tile dimension must be positive");
          tile.push_back(size);
        }
      } while (lexer.TryConsume(','));
      lexer.Expect(')', "to close a layout tile");
      details.tiles.push_back(std::move(tile));
    } while (lexer.Peek() == '(');
  }
  if (lexer.TryConsume("L")) details.tail_padding_alignment = parenthesized_integer("L(alignment)");
  if (lexer.TryConsume("E")) details.element_size_in_bits = parenthesized_integer("E(bits)");
  if (lexer.TryConsume("S")) details.memory_space = parenthesized_integer("S(memory space)");
  if (lexer.Peek() != '}') {
    lexer.Fail("unsupported layout attribute after ':' (supported: T(tiles), L(n), E(bits), "
               "S(memory space))");
  }
}

void ParseLayout(Lexer& lexer, Shape& shape) {
  LexPosition start = lexer.position();
  lexer.Expect('{', "to start a layout");
  std::vector<int64_t> m2m;
  if (!lexer.TryConsume('}')) {
    if (lexer.Peek() != ':') {
      do {
        if (m2m.size() > shape.dims.size()) break;
        m2m.push_back(lexer.Integer("a layout dimension"));
      } while (lexer.TryConsume(','));
    }
    if (lexer.TryConsume(':')) ParseLayoutDetails(lexer, shape.layout_details);
    lexer.Expect('}', "to close the layout");
  }
  // Scalars may print `{}`; other layouts must be a permutation of 0..rank-1.
  std::vector<bool> seen(shape.dims.size(), false);
  bool ok = m2m.size() == shape.dims.size();
  for (size_t i = 0; ok && i < m2m.size(); ++i) {
    int64_t d = m2m[i];
    ok = d >= 0 && d < static_cast<int64_t>(shape.dims.size()) && !seen[d];
    if (ok) seen[d] = true;
  }
  if (!ok) {
    lexer.FailAt(start, "layout is not a permutation of the " +
                            std::to_string(shape.dims.size()) + " dimensions of the shape");
  }
  shape.minor_to_major = std::move(m2m);
  shape.has_layout = true;
}

}  // namespace

Shape ParseShape(Lexer& lexer, int depth) {
  if (depth > kMaxNestingDepth) lexer.Fail("tuple shape nested too deeply");
  if (lexer.TryConsume('(')) {
    std::vector<Shape> elements;
    if (!lexer.TryConsume(')')) {
      do {
        elements.push_back(ParseShape(lexer, depth + 1));
      } while (lexer.TryConsume(','));
      lexer.Expect(')', "to close the tuple shape");
    }
    return Shape::Tuple(std::move(elements));
  }
  LexPosition type_pos = (lexer.SkipTrivia(), lexer.position());
  std::string_view type_name = lexer.Name("a shape");
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(type_name);
  if (!type) lexer.FailAt(type_pos, "unknown element type '" + std::string(type_name) + "'");
  if (lexer.PeekAt(0) != '[') lexer.Fail("expected '[' after the element type");
  lexer.Expect('[', "");
  if (*type == PrimitiveType::kToken) {
    lexer.Expect(']', "after token[");
    return Shape::Token();
  }
  Shape shape = Shape::Array(*type, {});
  if (!lexer.TryConsume(']')) {
    do {
      char c = lexer.Peek();
      if (c == '?' || c == '<') lexer.Fail("dynamic dimensions are not supported");
      LexPosition dim_pos = lexer.position();
      int64_t d = lexer.Integer("a dimension size");
      if (d < 0) lexer.FailAt(dim_pos, "negative dimension size " + std::to_string(d));
      if (static_cast<int64_t>(shape.dims.size()) >= GlobalLimits().max_rank) {
        lexer.FailAt(dim_pos, "rank exceeds the limit of " +
                                  std::to_string(GlobalLimits().max_rank));
      }
      shape.dims.push_back(d);
    } while (lexer.TryConsume(','));
    lexer.Expect(']', "to close the dimensions");
  }
  // A layout must follow the dimensions directly: `f32[] {` is a shape then a body.
  if (lexer.PeekAt(0) == '{') ParseLayout(lexer, shape);
  return shape;
}

// ----- literals --------------------------------------------------------------------------------

namespace {

template <typename T>
void StoreAt(Literal& literal, int64_t index, T value) {
  std::memcpy(literal.mutable_bytes().data() + index * sizeof(T), &value, sizeof(T));
}

// Parses a floating-point token: decimal/exponent forms, inf, nan with optional sign.
template <typename F>
F ParseFloatToken(Lexer& lexer, const LexPosition& pos, std::string_view text, const char* type) {
  bool negative = !text.empty() && text[0] == '-';
  std::string_view body = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? text.substr(1) : text;
  if (body == "inf" || body == "infinity") {
    return negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
  }
  if (body == "nan") {
    F nan = std::numeric_limits<F>::quiet_NaN();
    return negative ? -nan : nan;  // -nan keeps its sign bit
  }
  F value{};
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec == std::errc::result_out_of_range) {
    lexer.FailAt(pos, "number '" + std::string(text) + "' is out of range for " + type);
  }
  if (ec != std::errc() || ptr != body.data() + body.size() || body.empty() ||
      !(body[0] == '.' || (body[0] >= '0' && body[0] <= '9'))) {
    lexer.FailAt(pos, "invalid number '" + std::string(text) + "' for " + type);
  }
  return negative ? -value : value;
}

template <typename T>
T ParseIntegerToken(Lexer& lexer, const LexPosition& pos, std::string_view text, PrimitiveType type) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  std::string_view body = (!text.empty() && text[0] == '+') ? text.substr(1) : text;
  Wide value{};
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc() || ptr != body.data() + body.size() ||
      value < static_cast<Wide>(std::numeric_limits<T>::lowest()) ||
      value > static_cast<Wide>(std::numeric_limits<T>::max())) {
    lexer.FailAt(pos, "invalid or out-of-range " + std::string(PrimitiveTypeName(type)) +
                          " value '" + std::string(text) + "'");
  }
  return static_cast<T>(value);
}

// `(real, imag)`, as XLA prints complex constants.
void ParseComplexElement(Lexer& lexer, Literal& literal, int64_t index) {
  const PrimitiveType type = literal.shape().type;
  const char* name = type == PrimitiveType::kC64 ? "c64" : "c128";
  lexer.Expect('(', std::string("to start a ") + name + " value (real, imag)");
  double parts[2];
  for (int k = 0; k < 2; ++k) {
    if (k) lexer.Expect(',', "between the real and imaginary parts");
    LexPosition pos = (lexer.SkipTrivia(), lexer.position());
    std::string_view text = lexer.NumberText("a constant value");
    parts[k] = type == PrimitiveType::kC64 ? ParseFloatToken<float>(lexer, pos, text, name)
                                            : ParseFloatToken<double>(lexer, pos, text, name);
  }
  lexer.Expect(')', std::string("to close the ") + name + " value");
  literal.SetComplex(index, {parts[0], parts[1]});
}

void ParseElement(Lexer& lexer, Literal& literal, int64_t index) {
  PrimitiveType type = literal.shape().type;
  LexPosition pos = (lexer.SkipTrivia(), lexer.position());
  if (type == PrimitiveType::kPred) {
    if (lexer.TryConsume("true")) return StoreAt<uint8_t>(literal, index, 1);
    if (lexer.TryConsume("false")) return StoreAt<uint8_t>(literal, index, 0);
  }
  if (IsComplex(type)) return ParseComplexElement(lexer, literal, index);
  std::string_view text = lexer.NumberText("a constant value");
  switch (type) {
    case PrimitiveType::kPred: {
      if (text != "0" && text != "1") lexer.FailAt(pos, "invalid pred value '" + std::string(text) + "'");
      return StoreAt<uint8_t>(literal, index, text == "1");
    }
    case PrimitiveType::kS8: return StoreAt(literal, index, ParseIntegerToken<int8_t>(lexer, pos, text, type));
    case PrimitiveType::kS16: return StoreAt(literal, index, ParseIntegerToken<int16_t>(lexer, pos, text, type));
    case PrimitiveType::kS32: return StoreAt(literal, index, ParseIntegerToken<int32_t>(lexer, pos, text, type));
    case PrimitiveType::kS64: return StoreAt(literal, index, ParseIntegerToken<int64_t>(lexer, pos, text, type));
    case PrimitiveType::kU8: return StoreAt(literal, index, ParseIntegerToken<uint8_t>(lexer, pos, text, type));
    case PrimitiveType::kU16: return StoreAt(literal, index, ParseIntegerToken<uint16_t>(lexer, pos, text, type));
    case PrimitiveType::kU32: return StoreAt(literal, index, ParseIntegerToken<uint32_t>(lexer, pos, text, type));
    case PrimitiveType::kU64: return StoreAt(literal, index, ParseIntegerToken<uint64_t>(lexer, pos, text, type));
    case PrimitiveType::kF16:
      return StoreAt(literal, index, FloatToF16(ParseFloatToken<float>(lexer, pos, text, "f16")));
    case PrimitiveType::kBF16:
      return StoreAt(literal, index, FloatToBF16(ParseFloatToken<float>(lexer, pos, text, "bf16")));
    case PrimitiveType::kF32: return StoreAt(literal, index, ParseFloatToken<float>(lexer, pos, text, "f32"));
    case PrimitiveType::kF64: return StoreAt(literal, index, ParseFloatToken<double>(lexer, pos, text, "f64"));
    case PrimitiveType::kS4:
    case PrimitiveType::kU4: {
      const int64_t v = ParseIntegerToken<int64_t>(lexer, pos, text, type);
      const bool s4 = type == PrimitiveType::kS4;
      if (v < (s4 ? -8 : 0) || v > (s4 ? 7 : 15)) {
        lexer.FailAt(pos, "invalid or out-of-range " + std::string(PrimitiveTypeName(type)) +
                              " value '" + std::string(text) + "'");
      }
      return literal.SetFromInt64(index, v);
    }
    RETARGET_MINIFLOAT_CASES:
      return literal.SetFromDouble(
          index, ParseFloatToken<double>(lexer, pos, text, PrimitiveTypeName(type).data()));
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: break;
  }
  lexer.FailAt(pos, "constants of type " + std::string(PrimitiveTypeName(type)) + " are not supported");
}

// Reads the nested braces for dimensions [dim, rank) starting at row-major `index`.
void ParseArrayLevel(Lexer& lexer, Literal& literal, size_t dim, int64_t& index) {
  const std::vector<int64_t>& dims = literal.shape().dims;
  if (dim == dims.size()) {
    ParseElement(lexer, literal, index++);
    return;
  }
  LexPosition open = (lexer.SkipTrivia(), lexer.position());
  lexer.Expect('{', "to start dimension " + std::to_string(dim) + " of the constant");
  int64_t count = 0;
  if (lexer.Peek() != '}') {
    do {
      if (count == dims[dim]) {
        lexer.Fail("too many elements in dimension " + std::to_string(dim) + " of the constant (expected " +
                   std::to_string(dims[dim]) + ")");
      }
      ParseArrayLevel(lexer, literal, dim + 1, index);
      ++count;
    } while (lexer.TryConsume(','));
  }
  if (count != dims[dim]) {
    lexer.FailAt(open, "dimension " + std::to_string(dim) + " of the constant has " +
                           std::to_string(count) + " elements, the shape says " +
                           std::to_string(dims[dim]));
  }
  lexer.Expect('}', "to close dimension " + std::to_string(dim) + " of the constant");
}

bool TryConsumeElision(Lexer& lexer) {
  if (lexer.Peek() != '{') return false;
  Lexer probe = lexer;
  probe.Expect('{', "");
  if (!probe.TryConsume("...")) return false;
  if (!probe.TryConsume('}')) return false;
  lexer = probe;
  return true;
}

Literal ParseLiteralValue(Lexer& lexer, const Shape& shape, std::string_view name, bool& elided,
                          int depth) {
  if (depth > kMaxNestingDepth) lexer.Fail("constant tuple nested too deeply");
  SourceLocation loc = lexer.TokenLocation();
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    lexer.Expect('(', "to start a tuple constant");
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i) lexer.Expect(',', "between tuple constant elements");
      elements.push_back(ParseLiteralValue(lexer, shape.tuple_shapes[i], name, elided, depth + 1));
    }
    lexer.Expect(')', "to close the tuple constant");
    Literal result = Literal::Tuple(std::move(elements));
    result.mutable_shape() = shape;
    return result;
  }
  if (!shape.IsArray()) throw Error(loc, "a constant must be an array or a tuple");
  CheckAllocationLimit(shape, loc);
  if (TryConsumeElision(lexer)) {
    Literal literal(shape);
    FillElidedLiteral(literal, name);
    elided = true;
    return literal;
  }
  // Every element takes at least one character: refuse before allocating for absurd shapes.
  int64_t count = shape.ElementCount();
  size_t remaining = lexer.input().size() - lexer.position().offset;
  if (count > 0 && static_cast<uint64_t>(count) > remaining) {
    throw Error(loc, "constant of shape " + shape.ToString(false) + " has " + std::to_string(count) +
                         " elements but the input ends first");
  }
  Literal literal(shape);
  int64_t index = 0;
  ParseArrayLevel(lexer, literal, 0, index);
  return literal;
}

}  // namespace

Literal ParseConstantLiteral(Lexer& lexer, const Shape& shape, std::string_view instruction_name,
                             bool& elided) {
  elided = false;
  return ParseLiteralValue(lexer, shape, instruction_name, elided, 0);
}

void FillElidedLiteral(Literal& literal, std::string_view instruction_name) {
  if (literal.IsTuple()) {
    for (Literal& element : literal.mutable_elements()) FillElidedLiteral(element, instruction_name);
    return;
  }
  // FNV-1a of the name seeds a splitmix64 stream: stable across runs and platforms.
  uint64_t state = 1469598103934665603ull;
  for (char c : instruction_name) state = (state ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  PrimitiveType type = literal.shape().type;
  int64_t n = literal.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (type == PrimitiveType::kPred) {
      literal.SetFromInt64(i, i % 2);
    } else if (IsFloating(type)) {
      // Multiples of 1/256 in [-1, 1): exact in every float type, so bf16/f16 stay below 1.
      literal.SetFromDouble(i, static_cast<double>(static_cast<int64_t>(next() % 512) - 256) / 256.0);
    } else {
      literal.SetFromInt64(i, static_cast<int64_t>(next() % 8));
    }
  }
}

}  // namespace hlo::parser_internal
