// Element types, shapes and layouts.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hlo {

enum class PrimitiveType : uint8_t {
#define RETARGET_PRIMITIVE_TYPE(e, name, proto, bytes, ctype) e,
#include "hlo/types.def"
#undef RETARGET_PRIMITIVE_TYPE
};

std::string_view PrimitiveTypeName(PrimitiveType type);
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
int ProtoNumber(PrimitiveType type);
std::optional<PrimitiveType> PrimitiveTypeFromProtoNumber(int number);
int ByteSize(PrimitiveType type);  // 0 for tuple and token

bool IsFloating(PrimitiveType t);          // f16 bf16 f32 f64 and the minifloats (minifloat.h)
bool IsComplex(PrimitiveType t);           // c64 c128
PrimitiveType ComplexComponentType(PrimitiveType t);  // c64 -> f32, c128 -> f64
bool IsSignedInteger(PrimitiveType t);     // s4, s8..s64
bool IsUnsignedInteger(PrimitiveType t);   // u4, u8..u64
inline bool IsInteger(PrimitiveType t) { return IsSignedInteger(t) || IsUnsignedInteger(t); }
int BitWidth(PrimitiveType t);             // pred is 1 bit wide, s4/u4/f4e2m1fn 4

// What XLA prints after a layout's minor-to-major list, `{1,0:T(8,128)(2,1)L(1024)E(4)S(5)}`:
// tiles, tail padding, element size in bits and memory space. No operation here depends on them
// (values are logical); they are kept so that a module prints and serializes as it came, and
// memory_space tells where a value lives (kHostMemorySpace: offloaded to host memory).
struct LayoutDetails {
  static constexpr int64_t kCombineDimension = INT64_MIN;  // a `*` inside a tile
  std::vector<std::vector<int64_t>> tiles;
  int64_t tail_padding_alignment = 0;  // L(n); 0: not given
  int64_t element_size_in_bits = 0;    // E(n); 0: not given
  int64_t memory_space = 0;            // S(n); 0: device memory
  bool empty() const {
    return tiles.empty() && tail_padding_alignment == 0 && element_size_in_bits == 0 &&
           memory_space == 0;
  }
  bool operator==(const LayoutDetails&) const = default;
};
inline constexpr int64_t kHostMemorySpace = 5;  // XLA's S(5)

// An array shape (element type + dimensions + optional layout) or a tuple of shapes.
// Dimensions are in logical order; `minor_to_major` lists dimension numbers from the fastest
// varying to the slowest, as XLA prints `{1,0}`. An empty layout with has_layout == false means
// "none given" and is equivalent to the default descending layout {rank-1, ..., 0}.
struct Shape {
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims;
  std::vector<int64_t> minor_to_major;
  bool has_layout = false;
  LayoutDetails layout_details;     // only with has_layout
  std::vector<Shape> tuple_shapes;  // only for kTuple

  static Shape Array(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Scalar(PrimitiveType type) { return Array(type, {}); }
  static Shape Token() { Shape s; s.type = PrimitiveType::kToken; return s; }

  bool IsTuple() const { return type == PrimitiveType::kTuple; }
  bool IsToken() const { return type == PrimitiveType::kToken; }
  bool IsArray() const { return !IsTuple() && !IsToken(); }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  // Product of dims, or -1 on overflow past INT64_MAX. Arrays only.
  int64_t ElementCount() const;
  // The layout to use: minor_to_major if given, else the default descending one.
  std::vector<int64_t> EffectiveMinorToMajor() const;
  bool HasDefaultLayout() const;

  // Same element type and dimensions (recursively for tuples); layouts ignored.
  bool Compatible(const Shape& other) const;
  // Same element type, dimensions and effective layouts.
  bool Equal(const Shape& other) const;
  bool operator==(const Shape& other) const = default;  // exact, including has_layout

  // "f32[2,3]{1,0}" / "(f32[], s32[4]{0})". print_layout=false omits layouts.
  std::string ToString(bool print_layout = true) const;
};

// Row-major strides (in elements) for `dims`, i.e. for the default layout.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

// The flattened array shapes of a possibly nested tuple shape, depth-first (the order of
// `arg0.0, arg0.1, …` in .npz files).
void FlattenShape(const Shape& shape, std::vector<const Shape*>& out);

}  // namespace hlo
