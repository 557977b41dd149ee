// Shapes and literals <-> xla.ShapeProto / xla.LiteralProto.
//
// Guarantees: a shape read here has a known element type, non-negative dims, rank within
// GlobalLimits(), a layout that is a permutation of its dimensions, and tuple nesting bounded by
// protobuf's own recursion limit. A literal read here matches its instruction's shape, fits the
// allocation limit (checked before allocating), has exactly one value per element, and keeps
// every bit (NaN payloads, -0, bf16/f16 patterns) because data is copied, never converted.
#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include "hlo/proto_internal.h"

namespace hlo::proto_internal {

static_assert(std::endian::native == std::endian::little,
              "16-bit literal fields are little endian in XLA protos; this code copies them");

void Fail(const SourceLocation& loc, const std::string& message) { throw Error(loc, message); }

void ShapeToProto(const Shape& shape, xla::ShapeProto* proto) {
  proto->set_element_type(static_cast<xla::PrimitiveType>(ProtoNumber(shape.type)));
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) ShapeToProto(element, proto->add_tuple_shapes());
    return;
  }
  if (!shape.IsArray()) return;
  for (int64_t d : shape.dims) proto->add_dimensions(d);
  // mutable_layout() marks the layout as present even when it is empty (scalars).
  xla::LayoutProto* layout = proto->mutable_layout();
  for (int64_t d : shape.EffectiveMinorToMajor()) layout->add_minor_to_major(d);
  const LayoutDetails& details = shape.layout_details;
  for (const std::vector<int64_t>& tile : details.tiles) {
    xla::TileProto* t = layout->add_tiles();
    for (int64_t d : tile) t->add_dimensions(d);
  }
  layout->set_element_size_in_bits(details.element_size_in_bits);
  layout->set_memory_space(details.memory_space);
  layout->set_tail_padding_alignment_in_elements(details.tail_padding_alignment);
}

namespace {
void CollectLayoutless(const Shape& shape, int32_t& leaf, std::vector<int32_t>& out) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) CollectLayoutless(element, leaf, out);
    return;
  }
  if (shape.IsArray() && !shape.has_layout) out.push_back(leaf);
  ++leaf;
}
void ClearLayoutsFrom(Shape& shape, int32_t& leaf, const std::vector<int32_t>& leaves) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.tuple_shapes) ClearLayoutsFrom(element, leaf, leaves);
    return;
  }
  if (std::find(leaves.begin(), leaves.end(), leaf) != leaves.end()) {
    shape.has_layout = false;
    shape.minor_to_major.clear();
  }
  ++leaf;
}
}  // namespace

std::vector<int32_t> LayoutlessLeaves(const Shape& shape) {
  std::vector<int32_t> out;
  int32_t leaf = 0;
  CollectLayoutless(shape, leaf, out);
  return out;
}

void ClearLayouts(Shape& shape, const std::vector<int32_t>& leaves) {
  if (leaves.empty()) return;
  int32_t leaf = 0;
  ClearLayoutsFrom(shape, leaf, leaves);
}

Shape ShapeFromProto(const xla::ShapeProto& proto, const SourceLocation& loc,
                     const std::string& what) {
  std::optional<PrimitiveType> type = PrimitiveTypeFromProtoNumber(proto.element_type());
  if (!type) {
    Fail(loc, what + ": unsupported element type " + std::to_string(proto.element_type()) +
                  " in shape");
  }
  Shape shape;
  shape.type = *type;
  if (shape.IsTuple()) {
    for (const xla::ShapeProto& element : proto.tuple_shapes()) {
      shape.tuple_shapes.push_back(ShapeFromProto(element, loc, what));
    }
    return shape;
  }
  if (!shape.IsArray()) return shape;
  if (proto.dimensions_size() > GlobalLimits().max_rank) {
    Fail(loc, what + ": rank " + std::to_string(proto.dimensions_size()) + " exceeds the limit " +
                  std::to_string(GlobalLimits().max_rank));
  }
  for (int64_t d : proto.dimensions()) {
    if (d < 0) Fail(loc, what + ": negative dimension " + std::to_string(d) + " in shape");
    shape.dims.push_back(d);
  }
  if (proto.has_layout()) {
    shape.has_layout = true;
    const auto& m2m = proto.layout().minor_to_major();
    shape.minor_to_major.assign(m2m.begin(), m2m.end());
    std::vector<int64_t> sorted = shape.minor_to_major;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> iota(shape.dims.size());
    std::iota(iota.begin(), iota.end(), 0);
    // XLA writes an empty layout for some scalars/opaque shapes; any other must be a permutation.
    if (!(sorted.empty() && shape.dims.empty()) && sorted != iota) {
      Fail(loc, what + ": layout of " + shape.ToString() + " is not a permutation of its " +
                    std::to_string(shape.dims.size()) + " dimensions");
    }
    const xla::LayoutProto& layout = proto.layout();
    for (const xla::TileProto& tile : layout.tiles())
      shape.layout_details.tiles.emplace_back(tile.dimensions().begin(), tile.dimensions().end());
    shape.layout_details.element_size_in_bits = layout.element_size_in_bits();
    shape.layout_details.memory_space = layout.memory_space();
    // XLA writes 1 (its default) for "no tail padding"; the text form omits it.
    const int64_t tail = layout.tail_padding_alignment_in_elements();
    shape.layout_details.tail_padding_alignment = tail == 1 ? 0 : tail;
  }
  return shape;
}

namespace {

// Calls visit(physical, logical) for every element of `dims`, physical positions in the order of
// layout `m2m` (minor dimension fastest), logical ones row-major.
template <typename Visit>
void ForEachPhysicalElement(const std::vector<int64_t>& dims, const std::vector<int64_t>& m2m,
                            Visit visit) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t physical = 0; physical < count; ++physical) {
    int64_t logical = 0;
    for (size_t d = 0; d < index.size(); ++d) logical += index[d] * strides[d];
    visit(physical, logical);
    for (int64_t dim : m2m) {
      if (++index[static_cast<size_t>(dim)] < dims[static_cast<size_t>(dim)]) break;
      index[static_cast<size_t>(dim)] = 0;
    }
  }
}

bool IsRowMajor(const std::vector<int64_t>& dims, const std::vector<int64_t>& m2m) {
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(dims.size() - 1 - i)) return false;
  }
  return true;
}

// Copies the elements of `src` (stored in layout `m2m`) into the literal's row-major buffer.
void CopyIntoLogicalOrder(const uint8_t* src, Literal& literal,
                          const std::vector<int64_t>& m2m) {
  const Shape& shape = literal.shape();
  size_t element_size = static_cast<size_t>(ByteSize(shape.type));
  std::span<uint8_t> dst = literal.mutable_bytes();
  if (m2m.empty() || IsRowMajor(shape.dims, m2m)) {
    if (!dst.empty()) std::memcpy(dst.data(), src, dst.size());
    return;
  }
  ForEachPhysicalElement(shape.dims, m2m, [&](int64_t physical, int64_t logical) {
    std::memcpy(dst.data() + logical * element_size, src + physical * element_size, element_size);
  });
}

// The literal's bytes in layout `m2m` (the inverse of CopyIntoLogicalOrder).
std::vector<uint8_t> BytesInLayout(const Literal& literal, const std::vector<int64_t>& m2m) {
  std::span<const uint8_t> src = literal.bytes();
  if (IsRowMajor(literal.shape().dims, m2m)) return {src.begin(), src.end()};
  size_t element_size = static_cast<size_t>(ByteSize(literal.shape().type));
  std::vector<uint8_t> out(src.size());
  ForEachPhysicalElement(literal.shape().dims, m2m, [&](int64_t physical, int64_t logical) {
    std::memcpy(out.data() + physical * element_size, src.data() + logical * element_size,
                element_size);
  });
  return out;
}

// The data field of a LiteralProto that holds elements of one type, as raw bytes.
struct LiteralData {
  const uint8_t* bytes = nullptr;
  int64_t size = 0;           // in bytes
  bool repeated_field = true;  // counted in values (repeated) or in bytes (bytes fields)
};

template <typename Repeated>
LiteralData FromRepeated(const Repeated& values) {
  return {reinterpret_cast<const uint8_t*>(values.data()),
          static_cast<int64_t>(values.size() * sizeof(*values.data())), true};
}
LiteralData FromBytes(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()),
          false};
}

template <typename T, typename Repeated>
void AppendAll(std::span<const uint8_t> bytes, Repeated* out) {
  size_t n = bytes.size() / sizeof(T);
  out->Reserve(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out->Add(v);
  }
}

}  // namespace

void LiteralToProto(const Literal& literal, const Shape& layout_source,
                    xla::LiteralProto* proto) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    proto->mutable_shape()->set_element_type(xla::TUPLE);
    for (size_t i = 0; i < literal.elements().size(); ++i) {
      const Literal& element = literal.elements()[i];
      bool has_source = layout_source.IsTuple() && i < layout_source.tuple_shapes.size();
      LiteralToProto(element, has_source ? layout_source.tuple_shapes[i] : element.shape(),
                     proto->add_tuple_literals());
      *proto->mutable_shape()->add_tuple_shapes() = proto->tuple_literals(static_cast<int>(i)).shape();
    }
    return;
  }
  // Data goes out in the instruction's layout, and the literal shape says so.
  Shape with_layout = shape;
  with_layout.minor_to_major = layout_source.Compatible(shape)
                                   ? layout_source.EffectiveMinorToMajor()
                                   : shape.EffectiveMinorToMajor();
  with_layout.has_layout = true;
  ShapeToProto(with_layout, proto->mutable_shape());
  std::vector<uint8_t> ordered = BytesInLayout(literal, with_layout.minor_to_major);
  std::span<const uint8_t> bytes(ordered);
  std::string raw(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  switch (shape.type) {
    case PrimitiveType::kPred:
      for (uint8_t b : bytes) proto->add_preds(b != 0);
      return;
    case PrimitiveType::kS8: proto->set_s8s(raw); return;
    case PrimitiveType::kU8: proto->set_u8s(raw); return;
    case PrimitiveType::kS16: proto->set_s16s(raw); return;
    case PrimitiveType::kU16: proto->set_u16s(raw); return;
    case PrimitiveType::kF16: proto->set_f16s(raw); return;
    case PrimitiveType::kBF16: proto->set_bf16s(raw); return;
    case PrimitiveType::kS32: AppendAll<int32_t>(bytes, proto->mutable_s32s()); return;
    case PrimitiveType::kS64: AppendAll<int64_t>(bytes, proto->mutable_s64s()); return;
    case PrimitiveType::kU32: AppendAll<uint32_t>(bytes, proto->mutable_u32s()); return;
    case PrimitiveType::kU64: AppendAll<uint64_t>(bytes, proto->mutable_u64s()); return;
    case PrimitiveType::kF32: AppendAll<float>(bytes, proto->mutable_f32s()); return;
    case PrimitiveType::kF64: AppendAll<double>(bytes, proto->mutable_f64s()); return;
    case PrimitiveType::kC64: AppendAll<float>(bytes, proto->mutable_c64s()); return;
    case PrimitiveType::kC128: AppendAll<double>(bytes, proto->mutable_c128s()); return;
    // One value per byte in the low nibble, as XLA writes them (s4 not sign-extended).
    case PrimitiveType::kS4:
      for (char& c : raw) c = static_cast<char>(c & 0x0f);
      proto->set_s4s(raw);
      return;
    case PrimitiveType::kU4: proto->set_u4s(raw); return;
    case PrimitiveType::kF8E5M2: proto->set_f8e5m2s(raw); return;
    case PrimitiveType::kF8E4M3FN: proto->set_f8e4m3fns(raw); return;
    case PrimitiveType::kF8E4M3B11FNUZ: proto->set_f8e4m3b11fnuzs(raw); return;
    case PrimitiveType::kF8E5M2FNUZ: proto->set_f8e5m2fnuzs(raw); return;
    case PrimitiveType::kF8E4M3FNUZ: proto->set_f8e4m3fnuzs(raw); return;
    case PrimitiveType::kF8E4M3: proto->set_f8e4m3s(raw); return;
    case PrimitiveType::kF8E3M4: proto->set_f8e3m4s(raw); return;
    case PrimitiveType::kF4E2M1FN: proto->set_f4e2m1fns(raw); return;
    case PrimitiveType::kF8E8M0FNU: proto->set_f8e8m0fnus(raw); return;
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: return;
  }
}

Literal LiteralFromProto(const xla::LiteralProto& proto, const Shape& expected,
                         const SourceLocation& loc, const std::string& what) {
  if (!proto.has_shape()) Fail(loc, what + ": literal has no shape");
  Shape shape = ShapeFromProto(proto.shape(), loc, what);
  if (!shape.Compatible(expected)) {
    Fail(loc, what + ": literal shape " + shape.ToString(false) +
                  " does not match the instruction shape " + expected.ToString(false));
  }
  if (shape.IsTuple()) {
    if (proto.tuple_literals_size() != static_cast<int>(shape.tuple_shapes.size())) {
      Fail(loc, what + ": tuple literal has " + std::to_string(proto.tuple_literals_size()) +
                    " elements, shape needs " + std::to_string(shape.tuple_shapes.size()));
    }
    std::vector<Literal> elements;
    for (int i = 0; i < proto.tuple_literals_size(); ++i) {
      elements.push_back(LiteralFromProto(proto.tuple_literals(i),
                                          expected.tuple_shapes[static_cast<size_t>(i)], loc,
                                          what));
    }
    Literal tuple = Literal::Tuple(std::move(elements));
    tuple.mutable_shape() = expected;
    return tuple;
  }
  CheckAllocationLimit(shape, loc);
  std::vector<int64_t> m2m = shape.has_layout ? shape.minor_to_major : std::vector<int64_t>{};
  if (m2m.size() != shape.dims.size()) m2m.clear();  // empty scalar layout = default
  std::vector<uint8_t> preds;
  LiteralData data;
  switch (shape.type) {
    case PrimitiveType::kPred:
      preds.assign(proto.preds().begin(), proto.preds().end());
      data = {preds.data(), static_cast<int64_t>(preds.size()), true};
      break;
    case PrimitiveType::kS8: data = FromBytes(proto.s8s()); break;
    case PrimitiveType::kU8: data = FromBytes(proto.u8s()); break;
    case PrimitiveType::kS16: data = FromBytes(proto.s16s()); break;
    case PrimitiveType::kU16: data = FromBytes(proto.u16s()); break;
    case PrimitiveType::kF16: data = FromBytes(proto.f16s()); break;
    case PrimitiveType::kBF16: data = FromBytes(proto.bf16s()); break;
    case PrimitiveType::kS32: data = FromRepeated(proto.s32s()); break;
    case PrimitiveType::kS64: data = FromRepeated(proto.s64s()); break;
    case PrimitiveType::kU32: data = FromRepeated(proto.u32s()); break;
    case PrimitiveType::kU64: data = FromRepeated(proto.u64s()); break;
    case PrimitiveType::kF32: data = FromRepeated(proto.f32s()); break;
    case PrimitiveType::kF64: data = FromRepeated(proto.f64s()); break;
    case PrimitiveType::kC64: data = FromRepeated(proto.c64s()); break;
    case PrimitiveType::kC128: data = FromRepeated(proto.c128s()); break;
    case PrimitiveType::kS4: data = FromBytes(proto.s4s()); break;
    case PrimitiveType::kU4: data = FromBytes(proto.u4s()); break;
    case PrimitiveType::kF8E5M2: data = FromBytes(proto.f8e5m2s()); break;
    case PrimitiveType::kF8E4M3FN: data = FromBytes(proto.f8e4m3fns()); break;
    case PrimitiveType::kF8E4M3B11FNUZ: data = FromBytes(proto.f8e4m3b11fnuzs()); break;
    case PrimitiveType::kF8E5M2FNUZ: data = FromBytes(proto.f8e5m2fnuzs()); break;
    case PrimitiveType::kF8E4M3FNUZ: data = FromBytes(proto.f8e4m3fnuzs()); break;
    case PrimitiveType::kF8E4M3: data = FromBytes(proto.f8e4m3s()); break;
    case PrimitiveType::kF8E3M4: data = FromBytes(proto.f8e3m4s()); break;
    case PrimitiveType::kF4E2M1FN: data = FromBytes(proto.f4e2m1fns()); break;
    case PrimitiveType::kF8E8M0FNU: data = FromBytes(proto.f8e8m0fnus()); break;
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: break;
  }
  // Checked before allocating, so the allocation is bounded by the input's own size.
  int64_t element_size = ByteSize(shape.type);
  int64_t needed = shape.ElementCount() * element_size;
  if (data.size != needed) {
    int64_t unit = data.repeated_field ? element_size : 1;
    Fail(loc, what + ": literal has " + std::to_string(data.size / std::max<int64_t>(unit, 1)) +
                  (data.repeated_field ? " values" : " data bytes") + ", shape " +
                  shape.ToString(false) + " needs " +
                  std::to_string(needed / std::max<int64_t>(unit, 1)));
  }
  // The IR's literal carries the instruction's shape (layout included), as the text parser does.
  Literal literal(expected.IsArray() ? expected : shape);
  if (needed > 0) CopyIntoLogicalOrder(data.bytes, literal, m2m);
  // 4-bit values arrive in the low nibble: s4 is sign-extended, both drop the high nibble.
  if (shape.type == PrimitiveType::kS4 || shape.type == PrimitiveType::kU4) {
    for (int64_t i = 0; i < literal.element_count(); ++i)
      literal.SetFromInt64(i, literal.mutable_bytes()[i] & 0x0f);
  }
  return literal;
}

}  // namespace hlo::proto_internal
