// Opcode enum, names, arity and op classes, all generated from hlo/opcodes.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlo {

enum class Opcode : uint8_t {
#define RETARGET_OPCODE(e, name, arity, op_class) e,
#include "hlo/opcodes.def"
#undef RETARGET_OPCODE
};

enum class OpClass : uint8_t {
  kElementwiseUnary,
  kElementwiseBinary,
  kElementwiseTernary,
  kDataMovement,
  kReduction,
  kContraction,
  kControl,
  kCollective,
  kOther,
};

inline constexpr int kVariadic = -1;

std::string_view OpcodeName(Opcode op);
std::optional<Opcode> OpcodeFromName(std::string_view name);
int OpcodeArity(Opcode op);  // kVariadic for variable operand counts
OpClass OpcodeClass(Opcode op);
bool IsElementwise(Opcode op);  // unary, binary or ternary elementwise class
int OpcodeCount();

}  // namespace hlo
