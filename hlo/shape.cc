#include "hlo/shape.h"

#include <limits>

#include "hlo/minifloat.h"

namespace hlo {

namespace {
struct TypeRow {
  PrimitiveType type;
  std::string_view name;
  int proto;
  int bytes;
};
constexpr TypeRow kTypes[] = {
#define RETARGET_PRIMITIVE_TYPE(e, name, proto, bytes, ctype) {PrimitiveType::e, name, proto, bytes},
#include "hlo/types.def"
#undef RETARGET_PRIMITIVE_TYPE
};
const TypeRow& Row(PrimitiveType t) { return kTypes[static_cast<int>(t)]; }
}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) { return Row(type).name; }

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  for (const TypeRow& row : kTypes) {
    if (row.name == name && row.type != PrimitiveType::kTuple) return row.type;
  }
  return std::nullopt;
}

int ProtoNumber(PrimitiveType type) { return Row(type).proto; }

std::optional<PrimitiveType> PrimitiveTypeFromProtoNumber(int number) {
  for (const TypeRow& row : kTypes) {
    if (row.proto == number) return row.type;
  }
  return std::nullopt;
}

int ByteSize(PrimitiveType type) { return Row(type).bytes; }

bool IsFloating(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return IsMinifloat(t);
  }
}

bool IsComplex(PrimitiveType t) { return t == PrimitiveType::kC64 || t == PrimitiveType::kC128; }

PrimitiveType ComplexComponentType(PrimitiveType t) {
  return t == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

bool IsSignedInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kS4:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kU4:
      return true;
    default:
      return false;
  }
}

int BitWidth(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return 1;
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kF4E2M1FN:
      return 4;
    default: return ByteSize(t) * 8;
  }
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s;
  s.type = type;
  s.dims = std::move(dims);
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.type = PrimitiveType::kTuple;
  s.tuple_shapes = std::move(elements);
  return s;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::vector<int64_t> Shape::EffectiveMinorToMajor() const {
  if (has_layout && minor_to_major.size() == dims.size()) return minor_to_major;
  std::vector<int64_t> m2m(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) m2m[i] = static_cast<int64_t>(dims.size() - 1 - i);
  return m2m;
}

bool Shape::HasDefaultLayout() const {
  if (!has_layout) return true;
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (minor_to_major[i] != static_cast<int64_t>(dims.size() - 1 - i)) return false;
  }
  return true;
}

bool Shape::Compatible(const Shape& other) const {
  if (type != other.type) return false;
  if (IsTuple()) {
    if (tuple_shapes.size() != other.tuple_shapes.size()) return false;
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (!tuple_shapes[i].Compatible(other.tuple_shapes[i])) return false;
    }
    return true;
  }
  return dims == other.dims;
}

bool Shape::Equal(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (!tuple_shapes[i].Equal(other.tuple_shapes[i])) return false;
    }
    return true;
  }
  return EffectiveMinorToMajor() == other.EffectiveMinorToMajor();
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  if (IsTuple()) {
    out += "(";
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      out += tuple_shapes[i].ToString(print_layout);
    }
    out += ")";
    return out;
  }
  out += PrimitiveTypeName(type);
  out += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims[i]);
  }
  out += "]";
  if (print_layout && has_layout && IsArray()) {
    out += "{";
    for (size_t i = 0; i < minor_to_major.size(); ++i) {
      if (i) out += ",";
      out += std::to_string(minor_to_major[i]);
    }
    out += "}";
  }
  return out;
}

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

void FlattenShape(const Shape& shape, std::vector<const Shape*>& out) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) FlattenShape(element, out);
  } else {
    out.push_back(&shape);
  }
}

}  // namespace hlo
