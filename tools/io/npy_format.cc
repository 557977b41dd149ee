// The .npy format (numpy's NEP 1 "format.py": versions 1.0, 2.0 and 3.0).
//
//   "\x93NUMPY" major minor  header_len (u16 LE for v1, u32 LE for v2/v3)  header  data
//
// The header is a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n'. DecodeNpy accepts exactly the dtypes listed in npz.h, in
// either byte order and in C or Fortran order, and guarantees that it allocates nothing before
// checking that the data the header describes is really present (so a lying header cannot make
// it allocate more than the file holds) and within GlobalLimits(). EncodeNpy writes v1 headers
// (v2 when the header would not fit in 64 KiB), little-endian, C order, aligned to 64 bytes.
#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string_view>

#include "hlo/minifloat.h"
#include "tools/io/npz.h"

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kMaxHeaderLength = size_t{1} << 20;  // real headers are < 1 KiB

[[noreturn]] void Fail(const std::string& what, const std::string& message) {
  throw hlo::Error(what + ": " + message);
}

struct Dtype {
  hlo::PrimitiveType type;
  bool big_endian = false;
};

// "<f4", "|b1", ">i8", "?" ... -> element type and byte order.
std::optional<Dtype> ParseDescr(std::string_view descr) {
  bool big_endian = false;
  if (!descr.empty() &&
      (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
    big_endian = descr[0] == '>';
    descr.remove_prefix(1);
  }
  using hlo::PrimitiveType;
  struct Code {
    std::string_view code;
    PrimitiveType type;
  };
  static constexpr Code kCodes[] = {
      {"b1", PrimitiveType::kPred}, {"?", PrimitiveType::kPred}, {"i1", PrimitiveType::kS8},
      {"i2", PrimitiveType::kS16},  {"i4", PrimitiveType::kS32}, {"i8", PrimitiveType::kS64},
      {"u1", PrimitiveType::kU8},   {"u2", PrimitiveType::kU16}, {"u4", PrimitiveType::kU32},
      {"u8", PrimitiveType::kU64},  {"f2", PrimitiveType::kF16}, {"f4", PrimitiveType::kF32},
      {"f8", PrimitiveType::kF64},  {"c8", PrimitiveType::kC64}, {"c16", PrimitiveType::kC128},
  };
  for (const Code& c : kCodes) {
    if (descr == c.code) return Dtype{c.type, big_endian};
  }
  return std::nullopt;
}

// The descr numpy writes for an element type; bf16 and the 8-/4-bit floats are written as
// float32, s4/u4 as int8/uint8 (see npz.h).
std::string_view DescrFor(hlo::PrimitiveType type, const std::string& what) {
  using hlo::PrimitiveType;
  switch (type) {
    case PrimitiveType::kPred: return "|b1";
    case PrimitiveType::kS8: return "|i1";
    case PrimitiveType::kS16: return "<i2";
    case PrimitiveType::kS32: return "<i4";
    case PrimitiveType::kS64: return "<i8";
    case PrimitiveType::kU8: return "|u1";
    case PrimitiveType::kU16: return "<u2";
    case PrimitiveType::kU32: return "<u4";
    case PrimitiveType::kU64: return "<u8";
    case PrimitiveType::kF16: return "<f2";
    case PrimitiveType::kBF16: return "<f4";
    case PrimitiveType::kF32: return "<f4";
    case PrimitiveType::kF64: return "<f8";
    case PrimitiveType::kC64: return "<c8";
    case PrimitiveType::kC128: return "<c16";
    case PrimitiveType::kS4: return "|i1";
    case PrimitiveType::kU4: return "|u1";
    RETARGET_MINIFLOAT_CASES:
      return "<f4";
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: break;
  }
  Fail(what, "cannot store a " + std::string(hlo::PrimitiveTypeName(type)) +
                 " value in .npy (flatten tuples first)");
}

// A recursive-descent reader for the small Python literal subset numpy writes in headers.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  void Parse(std::string& descr, bool& fortran_order, std::vector<int64_t>& shape) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    Expect('{');
    while (!Peek('}')) {
      std::string key = ReadString();
      Expect(':');
      if (key == "descr") {
        if (Peek('[')) Fail(what_, "structured dtypes are not supported");
        descr = ReadString();
        seen_descr = true;
      } else if (key == "fortran_order") {
        fortran_order = ReadBool();
        seen_order = true;
      } else if (key == "shape") {
        shape = ReadTuple();
        seen_shape = true;
      } else {
        Fail(what_, "unexpected key '" + key + "' in the .npy header");
      }
      if (!Peek('}')) Expect(',');
    }
    Expect('}');
    if (!seen_descr || !seen_order || !seen_shape) {
      Fail(what_, "the .npy header lacks one of 'descr', 'fortran_order', 'shape'");
    }
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n'))
      ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) BadHeader(std::string("expected '") + c + "'");
    ++pos_;
  }
  [[noreturn]] void BadHeader(const std::string& problem) {
    Fail(what_, "malformed .npy header (" + problem + " at offset " + std::to_string(pos_) +
                    "): " + std::string(text_.substr(0, 120)));
  }
  std::string ReadString() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      BadHeader("expected a string");
    }
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) BadHeader("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool ReadBool() {
    SkipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word) {
        pos_ += n;
        return value;
      }
    }
    BadHeader("expected True or False");
  }
  std::vector<int64_t> ReadTuple() {
    Expect('(');
    std::vector<int64_t> dims;
    while (!Peek(')')) {
      dims.push_back(ReadDimension());
      if (static_cast<int64_t>(dims.size()) > hlo::GlobalLimits().max_rank) {
        Fail(what_, "the .npy shape has more than " + std::to_string(hlo::GlobalLimits().max_rank) +
                        " dimensions");
      }
      if (!Peek(')')) Expect(',');
    }
    Expect(')');
    return dims;
  }
  int64_t ReadDimension() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '-')
      Fail(what_, "the .npy shape has a negative dimension");
    int64_t value = 0;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (value > (INT64_MAX - 9) / 10) Fail(what_, "a .npy dimension overflows 64 bits");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) BadHeader("expected a dimension");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return value;
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

uint64_t ReadLittleEndian(std::string_view bytes, size_t offset, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[offset + static_cast<size_t>(i)]);
  }
  return value;
}

// Copies Fortran-order (column-major) elements into row-major order.
void FortranToRowMajor(const uint8_t* src, uint8_t* dst, const std::vector<int64_t>& dims,
                       size_t item_size) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count == 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  std::vector<int64_t> column_strides(dims.size(), 1);
  for (size_t k = 1; k < dims.size(); ++k) column_strides[k] = column_strides[k - 1] * dims[k - 1];
  for (int64_t out = 0; out < count; ++out) {
    int64_t in = 0;
    for (size_t k = 0; k < dims.size(); ++k) in += index[k] * column_strides[k];
    std::memcpy(dst + out * item_size, src + in * item_size, item_size);
    for (size_t k = dims.size(); k-- > 0;) {  // row-major increment: last dimension fastest
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
}

}  // namespace

hlo::Literal DecodeNpy(std::string_view bytes, const std::string& what) {
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    Fail(what, "not a .npy array (bad magic)");
  }
  int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) Fail(what, "unsupported .npy version " + std::to_string(major));
  int length_width = major == 1 ? 2 : 4;
  size_t preamble = 8 + static_cast<size_t>(length_width);
  if (bytes.size() < preamble) Fail(what, "truncated .npy header");
  uint64_t header_length = ReadLittleEndian(bytes, 8, length_width);
  if (header_length > kMaxHeaderLength || header_length > bytes.size() - preamble) {
    Fail(what, "truncated .npy header (declares " + std::to_string(header_length) +
                   " bytes, the file has " + std::to_string(bytes.size() - preamble) + ")");
  }
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> dims;
  HeaderParser(bytes.substr(preamble, header_length), what).Parse(descr, fortran_order, dims);
  std::optional<Dtype> dtype = ParseDescr(descr);
  if (!dtype) Fail(what, "unsupported dtype '" + descr + "'");

  hlo::Shape shape = hlo::Shape::Array(dtype->type, dims);
  int64_t count = shape.ElementCount();
  const hlo::Limits& limits = hlo::GlobalLimits();
  if (count < 0 || count > limits.max_elements_per_array) {
    Fail(what, "shape " + shape.ToString(false) + " is too large (limit " +
                   std::to_string(limits.max_elements_per_array) + " elements)");
  }
  size_t item_size = static_cast<size_t>(hlo::ByteSize(dtype->type));
  std::string_view data = bytes.substr(preamble + header_length);
  uint64_t expected = static_cast<uint64_t>(count) * item_size;
  if (expected > static_cast<uint64_t>(limits.max_bytes_per_allocation)) {
    Fail(what, "shape " + shape.ToString(false) + " needs " + std::to_string(expected) +
                   " bytes, beyond the allocation limit of " +
                   std::to_string(limits.max_bytes_per_allocation));
  }
  if (data.size() != expected) {
    Fail(what, "the header describes " + shape.ToString(false) + " (" + std::to_string(expected) +
                   " bytes of data) but the file holds " + std::to_string(data.size()) + " bytes");
  }
  hlo::Literal literal(shape);  // bounded: the data is really there
  uint8_t* out = literal.mutable_bytes().data();
  const auto* in = reinterpret_cast<const uint8_t*>(data.data());
  if (fortran_order && dims.size() > 1) {
    FortranToRowMajor(in, out, dims, item_size);
  } else if (expected > 0) {
    std::memcpy(out, in, expected);
  }
  if (dtype->big_endian && item_size > 1) {
    // A complex element is two floats, each in the file's byte order.
    const size_t word = hlo::IsComplex(dtype->type) ? item_size / 2 : item_size;
    for (uint64_t i = 0; i < expected; i += word) std::reverse(out + i, out + i + word);
  }
  if (dtype->type == hlo::PrimitiveType::kPred) {
    for (uint64_t i = 0; i < expected; ++i) out[i] = out[i] != 0;  // canonical 0/1
  }
  return literal;
}

std::string EncodeNpy(const hlo::Literal& literal) {
  const hlo::Shape& shape = literal.shape();
  std::string descr(DescrFor(shape.type, "array " + shape.ToString(false)));
  std::string dims;
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    dims += std::to_string(shape.dims[i]);
    if (i + 1 < shape.dims.size() || shape.dims.size() == 1) dims += ",";
    if (i + 1 < shape.dims.size()) dims += " ";
  }
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so the data starts 64-byte aligned; the header ends with '\n'.
  bool version2 = header.size() + 1 + 10 > 0xFFFF;
  size_t preamble = version2 ? 12 : 10;
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::string out(kMagic);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i) {
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  }
  out += header;
  if (shape.type == hlo::PrimitiveType::kBF16 || hlo::IsMinifloat(shape.type)) {
    // Every bf16 and 8-/4-bit float value is exactly representable in f32.
    for (int64_t i = 0; i < literal.element_count(); ++i) {
      float value = static_cast<float>(literal.GetAsDouble(i));
      out.append(reinterpret_cast<const char*>(&value), sizeof(value));
    }
  } else {
    auto bytes = literal.bytes();
    out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return out;
}

}  // namespace io
