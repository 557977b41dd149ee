#include "hlo/opcodes.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include "hlo/attributes.h"

namespace hlo {
namespace {
struct OpcodeRow {
  std::string_view name;
  int arity;
  OpClass op_class;
};
constexpr OpcodeRow kOpcodes[] = {
#define RETARGET_OPCODE(e, name, arity, op_class) {name, arity, OpClass::op_class},
#include "hlo/opcodes.def"
#undef RETARGET_OPCODE
};
}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<int>(op)].name; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new std::unordered_map<std::string_view, Opcode>;
    for (int i = 0; i < OpcodeCount(); ++i) (*map)[kOpcodes[i].name] = static_cast<Opcode>(i);
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

int OpcodeArity(Opcode op) { return kOpcodes[static_cast<int>(op)].arity; }
OpClass OpcodeClass(Opcode op) { return kOpcodes[static_cast<int>(op)].op_class; }

bool IsElementwise(Opcode op) {
  switch (OpcodeClass(op)) {
    case OpClass::kElementwiseUnary:
    case OpClass::kElementwiseBinary:
    case OpClass::kElementwiseTernary:
      return true;
    default:
      return false;
  }
}

int OpcodeCount() { return static_cast<int>(std::size(kOpcodes)); }

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kGe: return "GE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kLt: return "LT";
  }
  return "?";
}

std::string_view ComparisonTypeName(ComparisonType t) {
  switch (t) {
    case ComparisonType::kDefault: return "";
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
  }
  return "?";
}

std::string_view FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "?";
}

std::string_view FftTypeName(FftType t) {
  switch (t) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "?";
}

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kDefault: return "default";
    case Precision::kHigh: return "high";
    case Precision::kHighest: return "highest";
  }
  return "?";
}

}  // namespace hlo
