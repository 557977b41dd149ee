// Internal interfaces shared by the HLO text parser's files (parser.cc: module structure;
// parser_shape_literal.cc: shapes and constant literals; parser_attributes.cc: typed attributes).
// Not part of the hlo/ API: include only from hlo/parser*.cc.
#pragma once

#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/lexer.h"

namespace hlo::parser_internal {

// Nested tuples (shapes and literals) deeper than this are rejected so that hostile input
// cannot overflow the stack.
inline constexpr int kMaxNestingDepth = 256;

// `name=value` after an instruction's operands, value kept raw until the opcode is known.
struct RawAttribute {
  std::string_view name;
  LexPosition name_pos;
  RawText value;
};

// A reference to a computation by name, resolved once the whole module is read.
struct ComputationRef {
  std::string_view name;
  LexPosition pos;
};

struct ParsedAttributes {
  Attrs attrs;
  std::vector<OpaqueAttribute> opaque;
  std::vector<ComputationRef> called;  // in the op's fixed order (see ir.h)
};

// `f32[2,3]{1,0}`, `(s32[], f32[4])`, `token[]`. Rejects unknown element types, dynamic or
// negative dimensions, dimensions beyond int64, ranks beyond GlobalLimits().max_rank, layouts
// that are not a permutation, and tuples nested deeper than kMaxNestingDepth.
Shape ParseShape(Lexer& lexer, int depth = 0);

// The text inside `constant(...)` for a value of `shape`. `{...}` (elided values) is filled
// deterministically from `instruction_name` and sets `elided`.
Literal ParseConstantLiteral(Lexer& lexer, const Shape& shape, std::string_view instruction_name,
                             bool& elided);

// Deterministic contents for an elided constant (see ir.h): seeded by a hash of the name.
void FillElidedLiteral(Literal& literal, std::string_view instruction_name);

// Interprets the raw attributes of one instruction of `opcode`: typed attributes go into
// `out.attrs`, called computations into `out.called`, known uninterpreted ones into
// `out.opaque` (verbatim). Unknown or misplaced attributes and missing required ones are
// errors at the attribute's (or `opcode_pos`'s) location.
void ParseInstructionAttributes(Lexer& lexer, Opcode opcode, const LexPosition& opcode_pos,
                                const std::vector<RawAttribute>& raw, ParsedAttributes& out);

}  // namespace hlo::parser_internal
