// .npz archives (a zip of `NAME.npy` entries) and conversion of file arrays to parameter shapes.
// The .npy codec lives in npy_format.cc and the zip container in zip_archive.cc; this file joins
// them, reads and writes files, and applies the bf16 rule of npz.h. Every error names the file
// (and the entry where there is one).
#include "tools/io/npz.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "hlo/minifloat.h"
#include "tools/io/zip_archive.h"

namespace io {
namespace {

std::string ReadWholeFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw hlo::Error(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hlo::Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw hlo::Error(path + ": read error");
  return bytes;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::vector<NpyArray> ReadNpz(const std::string& path) {
  std::string bytes = ReadWholeFile(path);
  return DecodeNpz(bytes, path);
}

std::vector<NpyArray> DecodeNpz(std::string_view bytes, const std::string& path) {
  if (StartsWith(bytes, "\x93NUMPY")) {
    throw hlo::Error(path + ": is a single .npy array, not an .npz archive");
  }
  if (!StartsWith(bytes, "PK\x03\x04") && !StartsWith(bytes, "PK\x05\x06")) {
    throw hlo::Error(path + ": not an .npz file (bad magic; expected a zip archive)");
  }
  std::vector<NpyArray> arrays;
  std::set<std::string> names;
  for (ZipEntry& entry : ReadZip(bytes, path)) {
    std::string what = path + ": entry '" + entry.name + "'";
    constexpr std::string_view kSuffix = ".npy";
    if (entry.name.size() <= kSuffix.size() ||
        entry.name.compare(entry.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
      throw hlo::Error(what + ": not a .npy array (name must end in .npy)");
    }
    std::string name = entry.name.substr(0, entry.name.size() - kSuffix.size());
    if (!names.insert(name).second) throw hlo::Error(what + ": duplicate entry");
    hlo::Literal literal = DecodeNpy(entry.data, what);
    std::string().swap(entry.data);  // release the encoded copy early: inputs can be large
    arrays.push_back({std::move(name), std::move(literal)});
  }
  return arrays;
}

hlo::Literal ReadNpy(const std::string& path) { return DecodeNpy(ReadWholeFile(path), path); }

void WriteNpz(const std::string& path, const std::vector<NpyArray>& arrays) {
  std::vector<ZipEntry> entries;
  std::set<std::string> names;
  for (const NpyArray& array : arrays) {
    if (array.name.empty() || !names.insert(array.name).second) {
      throw hlo::Error(path + ": array name '" + array.name + "' is empty or repeated");
    }
    if (!array.literal.shape().IsArray()) {
      throw hlo::Error(path + ": entry '" + array.name +
                       "' is not an array (flatten tuples first)");
    }
    entries.push_back({array.name + ".npy", EncodeNpy(array.literal)});
  }
  std::string bytes = WriteZip(entries);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw hlo::Error(path + ": cannot write (" + std::strerror(errno) + ")");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw hlo::Error(path + ": write failed (disk full?)");
}

hlo::Literal ConformToShape(const hlo::Literal& array, const hlo::Shape& shape,
                            const std::string& what) {
  using hlo::PrimitiveType;
  if (!shape.IsArray() || !array.shape().IsArray()) {
    throw hlo::Error(what + ": expected an array for " + shape.ToString(false));
  }
  const hlo::Shape& have = array.shape();
  if (have.dims != shape.dims) {
    throw hlo::Error(what + ": has shape " + have.ToString(false) + " but " +
                     shape.ToString(false) + " is needed");
  }
  hlo::Literal result(shape);
  // The bf16 rule (npz.h): numpy has no bf16, so accept float32 (rounded to nearest even) or
  // uint16 bit patterns; the 8-/4-bit floats likewise float32 (rounded to the format, as a
  // convert would) or uint8 bit patterns; s4/u4 int8/uint8 values in range.
  const bool bit_patterns =
      (shape.type == PrimitiveType::kBF16 && have.type == PrimitiveType::kU16) ||
      (hlo::IsMinifloat(shape.type) && have.type == PrimitiveType::kU8);
  if (have.type == shape.type || bit_patterns) {
    // A zero-element array may have no storage at all: memcpy's pointers must not be null.
    if (!array.bytes().empty())
      std::memcpy(result.mutable_bytes().data(), array.bytes().data(), array.bytes().size());
    return result;
  }
  if (shape.type == PrimitiveType::kBF16 && have.type == PrimitiveType::kF32) {
    auto in = array.data<float>();
    auto out = result.mutable_data<uint16_t>();
    for (size_t i = 0; i < in.size(); ++i) out[i] = hlo::FloatToBF16(in[i]);
    return result;
  }
  if (hlo::IsMinifloat(shape.type) && have.type == PrimitiveType::kF32) {
    for (int64_t i = 0; i < result.element_count(); ++i) {
      result.SetFromDouble(i, array.GetAsDouble(i));
    }
    return result;
  }
  if ((shape.type == PrimitiveType::kS4 && have.type == PrimitiveType::kS8) ||
      (shape.type == PrimitiveType::kU4 && have.type == PrimitiveType::kU8)) {
    const int64_t low = shape.type == PrimitiveType::kS4 ? -8 : 0;
    const int64_t high = shape.type == PrimitiveType::kS4 ? 7 : 15;
    for (int64_t i = 0; i < result.element_count(); ++i) {
      const int64_t v = array.GetAsInt64(i);
      if (v < low || v > high) {
        throw hlo::Error(what + ": element " + std::to_string(i) + " is " + std::to_string(v) +
                         ", outside the range of " +
                         std::string(hlo::PrimitiveTypeName(shape.type)));
      }
      result.SetFromInt64(i, v);
    }
    return result;
  }
  // c64 from complex128 and c128 from complex64 (numpy's default complex is complex128).
  if (hlo::IsComplex(shape.type) && hlo::IsComplex(have.type)) {
    for (int64_t i = 0; i < result.element_count(); ++i) result.SetComplex(i, array.GetComplex(i));
    return result;
  }
  throw hlo::Error(what + ": has element type " + std::string(hlo::PrimitiveTypeName(have.type)) +
                   " but " + shape.ToString(false) + " is needed" +
                   (shape.type == PrimitiveType::kBF16 ? " (bf16 reads float32 or uint16)"
                    : hlo::IsMinifloat(shape.type)  ? " (8-bit floats read float32 or uint8)"
                                                    : ""));
}

}  // namespace io
