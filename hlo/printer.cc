// HLO text printer (see printer.h for the canonical form).
//
// Guarantees: the output is accepted by ParseHloText (and by XLA's parser for the features XLA
// has), print -> parse -> print is a fixed point, and floats are printed in the shortest form
// that parses back to the same bits (std::to_chars), with inf/-inf/nan/-nan spelled out.
#include "hlo/printer.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "hlo/lexer.h"
#include "hlo/literal.h"
#include "hlo/minifloat.h"
#include "hlo/printer_internal.h"

namespace hlo {
namespace {

// `:T(8,128)(2,1)L(1024)E(4)S(5)`, XLA's order and spelling.
void AppendLayoutDetails(std::string& out, const LayoutDetails& details) {
  out += ':';
  if (!details.tiles.empty()) out += 'T';
  for (const std::vector<int64_t>& tile : details.tiles) {
    out += '(';
    for (size_t i = 0; i < tile.size(); ++i) {
      if (i) out += ',';
      out += tile[i] == LayoutDetails::kCombineDimension ? "*" : std::to_string(tile[i]);
    }
    out += ')';
  }
  if (details.tail_padding_alignment != 0)
    out += "L(" + std::to_string(details.tail_padding_alignment) + ")";
  if (details.element_size_in_bits != 0)
    out += "E(" + std::to_string(details.element_size_in_bits) + ")";
  if (details.memory_space != 0) out += "S(" + std::to_string(details.memory_space) + ")";
}

void AppendShape(std::string& out, const Shape& shape, bool print_layouts) {
  if (shape.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      AppendShape(out, shape.tuple_shapes[i], print_layouts);
    }
    out += ')';
    return;
  }
  out += PrimitiveTypeName(shape.type);
  out += '[';
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape.dims[i]);
  }
  out += ']';
  const LayoutDetails& details = shape.layout_details;
  if (print_layouts && shape.IsArray() && (!shape.dims.empty() || !details.empty())) {
    out += '{';
    std::vector<int64_t> m2m = shape.EffectiveMinorToMajor();
    for (size_t i = 0; i < m2m.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(m2m[i]);
    }
    if (!details.empty()) AppendLayoutDetails(out, details);
    out += '}';
  }
}

template <typename F>
void AppendFloat(std::string& out, F value) {
  if (std::isnan(value)) {
    out += std::signbit(value) ? "-nan" : "nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general);
  out.append(buf, ptr);
}

// bf16/f16: the shortest %g form that the parser (decimal -> f32 -> 16 bits, nearest even)
// maps back to the same bits, e.g. `0.01001` rather than the f32 spelling `0.010009766`.
void AppendHalf(std::string& out, uint16_t bits, float (*to_float)(uint16_t),
                uint16_t (*from_float)(float)) {
  float value = to_float(bits);
  if (std::isnan(value) || std::isinf(value)) return AppendFloat(out, value);
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, precision);
    float reparsed = 0;
    std::from_chars(buf, ptr, reparsed);
    if (from_float(reparsed) == bits) {
      out.append(buf, ptr);
      return;
    }
  }
  AppendFloat(out, value);
}

template <typename T>
T LoadElement(const Literal& literal, int64_t i) {
  T v;
  std::memcpy(&v, literal.bytes().data() + i * sizeof(T), sizeof(T));
  return v;
}

// XLA's spelling of a complex element: `(real, imag)`, each part as its float type prints.
template <typename Part>
void AppendComplex(std::string& out, const Literal& literal, int64_t i) {
  out += '(';
  AppendFloat(out, LoadElement<Part>(literal, 2 * i));
  out += ", ";
  AppendFloat(out, LoadElement<Part>(literal, 2 * i + 1));
  out += ')';
}

void AppendElement(std::string& out, const Literal& literal, int64_t i) {
  switch (literal.shape().type) {
    case PrimitiveType::kPred: out += literal.bytes()[i] ? "true" : "false"; return;
    case PrimitiveType::kS8: out += std::to_string(LoadElement<int8_t>(literal, i)); return;
    case PrimitiveType::kS16: out += std::to_string(LoadElement<int16_t>(literal, i)); return;
    case PrimitiveType::kS32: out += std::to_string(LoadElement<int32_t>(literal, i)); return;
    case PrimitiveType::kS64: out += std::to_string(LoadElement<int64_t>(literal, i)); return;
    case PrimitiveType::kU8: out += std::to_string(LoadElement<uint8_t>(literal, i)); return;
    case PrimitiveType::kU16: out += std::to_string(LoadElement<uint16_t>(literal, i)); return;
    case PrimitiveType::kU32: out += std::to_string(LoadElement<uint32_t>(literal, i)); return;
    case PrimitiveType::kU64: out += std::to_string(LoadElement<uint64_t>(literal, i)); return;
    case PrimitiveType::kF16:
      return AppendHalf(out, LoadElement<uint16_t>(literal, i), F16ToFloat, FloatToF16);
    case PrimitiveType::kBF16:
      return AppendHalf(out, LoadElement<uint16_t>(literal, i), BF16ToFloat, FloatToBF16);
    case PrimitiveType::kF32: AppendFloat(out, LoadElement<float>(literal, i)); return;
    case PrimitiveType::kF64: AppendFloat(out, LoadElement<double>(literal, i)); return;
    case PrimitiveType::kS4: out += std::to_string(LoadElement<int8_t>(literal, i)); return;
    case PrimitiveType::kU4: out += std::to_string(LoadElement<uint8_t>(literal, i)); return;
    case PrimitiveType::kC64: return AppendComplex<float>(out, literal, i);
    case PrimitiveType::kC128: return AppendComplex<double>(out, literal, i);
    // Minifloat values are exact doubles: the shortest double spelling reparses to the same bits.
    RETARGET_MINIFLOAT_CASES:
      AppendFloat(out, literal.GetAsDouble(i));
      return;
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: return;
  }
}

void AppendArrayLevel(std::string& out, const Literal& literal, size_t dim, int64_t& index) {
  const std::vector<int64_t>& dims = literal.shape().dims;
  if (dim == dims.size()) {
    AppendElement(out, literal, index++);
    return;
  }
  bool inner = dim + 1 == dims.size();
  out += inner ? "{" : "{ ";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i) out += ", ";
    AppendArrayLevel(out, literal, dim + 1, index);
  }
  out += inner ? "}" : " }";
}

void AppendLiteral(std::string& out, const Literal& literal) {
  if (literal.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < literal.elements().size(); ++i) {
      if (i) out += ", ";
      AppendLiteral(out, literal.elements()[i]);
    }
    out += ')';
    return;
  }
  int64_t index = 0;
  AppendArrayLevel(out, literal, 0, index);
}

void AppendInts(std::string& out, const std::vector<int64_t>& values) {
  out += '{';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  out += '}';
}

}  // namespace

namespace printer_internal {
void AppendIntList(std::string& out, const std::vector<int64_t>& values) { AppendInts(out, values); }
void AppendShapeText(std::string& out, const Shape& shape) { AppendShape(out, shape, true); }
}  // namespace printer_internal

std::string PrintLiteral(const Literal& literal) {
  std::string out;
  AppendLiteral(out, literal);
  return out;
}

std::string PrintInstruction(const Instruction& inst, const PrintOptions& options) {
  std::string out;
  if (inst.parent() && inst.parent()->root() == &inst) out += "ROOT ";
  out += inst.name();
  out += " = ";
  AppendShape(out, inst.shape(), options.print_layouts);
  out += ' ';
  out += OpcodeName(inst.opcode());
  out += '(';
  if (inst.opcode() == Opcode::kParameter && inst.has_attr<ParameterAttrs>()) {
    out += std::to_string(inst.attr<ParameterAttrs>().number);
  } else if (inst.opcode() == Opcode::kConstant && inst.has_attr<ConstantAttrs>()) {
    const ConstantAttrs& c = inst.attr<ConstantAttrs>();
    if (c.elided) {
      out += "{...}";
    } else {
      AppendLiteral(out, c.literal);
    }
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (i) out += ", ";
      out += inst.operand(i)->name();
    }
  }
  out += ')';
  printer_internal::AppendTypedAttributes(out, inst);
  if (options.print_opaque_attributes) {
    for (const OpaqueAttribute& a : inst.opaque_attributes()) {
      out += ", " + a.name + "=" + a.value;
    }
  }
  return out;
}

std::string PrintComputation(const Computation& computation, const PrintOptions& options) {
  std::string out;
  if (computation.is_entry()) out += "ENTRY ";
  out += computation.name();
  out += " {\n";
  for (const auto& inst : computation.instructions()) {
    out += "  ";
    out += PrintInstruction(*inst, options);
    out += '\n';
  }
  out += '}';
  for (const OpaqueAttribute& a : computation.opaque_attributes()) {
    out += ", " + a.name + "=" + a.value;
  }
  out += '\n';
  return out;
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out = "HloModule " + module.name();
  if (const Computation* entry = module.entry()) {
    out += ", entry_computation_layout={(";
    bool first = true;
    for (const Instruction* p : entry->parameters()) {
      if (!p) continue;
      if (!first) out += ", ";
      first = false;
      AppendShape(out, p->shape(), true);
    }
    out += ")->";
    if (entry->root()) AppendShape(out, entry->root()->shape(), true);
    out += '}';
  }
  for (const OpaqueAttribute& a : module.header_attributes()) {
    out += ", " + a.name + "=" + a.value;
  }
  out += "\n";
  if (options.print_trailing_tables && !module.leading_tables().empty()) {
    out += '\n';
    out += module.leading_tables();
    out += '\n';
  }
  for (const auto& computation : module.computations()) {
    out += '\n';
    out += PrintComputation(*computation, options);
  }
  if (options.print_trailing_tables && !module.trailing_tables().empty()) {
    out += '\n';
    out += module.trailing_tables();
    out += '\n';
  }
  return out;
}

}  // namespace hlo
