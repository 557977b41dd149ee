// .npz reading and writing (see npz.h). Zip structures per PKWARE's APPNOTE: end of central
// directory (0x06054b50), central directory headers (0x02014b50), local headers (0x04034b50),
// zip64 extended information extra field (id 0x0001).
#include "targets/gpu/runtime/npz.h"

#include <cstring>
#include <fstream>

#include "targets/gpu/artifact.h"  // gpu::Crc32
#include "targets/gpu/runtime/run_error.h"

namespace gpu::runtime {
namespace {

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint64_t kMaxNpzBytes = uint64_t{64} << 30;
constexpr char kNpyMagic[] = "\x93NUMPY";

struct Le {
  std::string_view bytes;
  const std::string& source;
  uint64_t Get(size_t at, size_t width) const {
    if (at > bytes.size() || width > bytes.size() - at) {
      throw RunError(source + ": truncated .npz (structure at byte " + std::to_string(at) + " runs past the end)");
    }
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    return v;
  }
  std::string_view Sub(uint64_t at, uint64_t n) const {
    if (at > bytes.size() || n > bytes.size() - at) {
      throw RunError(source + ": truncated .npz (entry data at byte " + std::to_string(at) + " runs past the end)");
    }
    return bytes.substr(at, n);
  }
};

// Parses the dict literal of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
NpyArray ParseNpy(std::string_view npy, const std::string& where) {
  auto fail = [&](const std::string& m) -> void { throw RunError(where + ": " + m); };
  if (npy.size() < 10 || npy.substr(0, 6) != std::string_view(kNpyMagic, 6)) fail("not a .npy entry");
  const int major = static_cast<unsigned char>(npy[6]);
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (npy.size() < 12) fail("truncated .npy header");
    for (int i = 0; i < 4; ++i) header_len |= size_t{static_cast<unsigned char>(npy[8 + i])} << (8 * i);
    header_at = 12;
  } else {
    fail(".npy format version " + std::to_string(major) + " is not supported");
  }
  if (header_len > npy.size() - header_at) fail("truncated .npy header");
  const std::string_view header = npy.substr(header_at, header_len);
  auto value_after = [&](std::string_view key) -> size_t {
    const size_t k = header.find(key);
    if (k == std::string_view::npos) fail(".npy header lacks " + std::string(key));
    size_t p = header.find(':', k);
    if (p == std::string_view::npos) fail("malformed .npy header");
    ++p;
    while (p < header.size() && header[p] == ' ') ++p;
    return p;
  };
  NpyArray array;
  size_t p = value_after("'descr'");
  if (p >= header.size() || (header[p] != '\'' && header[p] != '"')) fail("descr is not a simple type string");
  const size_t close = header.find(header[p], p + 1);
  if (close == std::string_view::npos) fail("malformed descr");
  array.descr = std::string(header.substr(p + 1, close - p - 1));
  p = value_after("'fortran_order'");
  const bool fortran = header.substr(p, 4) == "True";
  p = value_after("'shape'");
  if (p >= header.size() || header[p] != '(') fail("malformed shape");
  ++p;
  while (p < header.size() && header[p] != ')') {
    if (header[p] == ' ' || header[p] == ',') { ++p; continue; }
    if (header[p] < '0' || header[p] > '9') fail("malformed shape");
    int64_t d = 0;
    while (p < header.size() && header[p] >= '0' && header[p] <= '9') {
      if (d > (int64_t{1} << 40)) fail("dimension too large");
      d = d * 10 + (header[p++] - '0');
    }
    array.shape.push_back(d);
  }
  if (fortran && array.shape.size() > 1) fail("Fortran-order arrays are not supported (save with C order)");
  const int esize = NpyDescrBytes(array.descr);
  if (esize == 0) fail("unsupported dtype '" + array.descr + "'");
  uint64_t elements = 1;
  for (int64_t d : array.shape) {
    if (d != 0 && elements > (uint64_t{1} << 40) / static_cast<uint64_t>(d)) fail("array too large");
    elements *= static_cast<uint64_t>(d);
  }
  const std::string_view data = npy.substr(header_at + header_len);
  if (data.size() != elements * static_cast<uint64_t>(esize)) {
    fail("data has " + std::to_string(data.size()) + " bytes, shape and dtype need " +
         std::to_string(elements * esize));
  }
  array.data.assign(data);
  return array;
}

void PutLe(std::string& out, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string NpyBytes(const NpyArray& a) {
  std::string dict = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i) dict += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
  dict += "), }";
  // numpy pads the header with spaces and a newline so the data starts 64-byte aligned.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out(kNpyMagic, 6);
  out += '\x01';
  out += '\x00';
  PutLe(out, dict.size(), 2);
  out += dict;
  out += a.data;
  return out;
}

}  // namespace

int NpyDescrBytes(std::string_view d) {
  if (d == "|b1" || d == "|i1" || d == "|u1") return 1;
  if (d == "<i2" || d == "<u2" || d == "<f2") return 2;
  if (d == "<i4" || d == "<u4" || d == "<f4") return 4;
  if (d == "<i8" || d == "<u8" || d == "<f8") return 8;
  return 0;
}

std::vector<NpyArray> ParseNpz(std::string_view bytes, const std::string& source) {
  const Le le{bytes, source};
  if (bytes.size() < 22) throw RunError(source + ": not a .npz file (too short for a zip)");
  // The end-of-central-directory record is the last 22 bytes plus an optional comment.
  size_t eocd = std::string_view::npos;
  const size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (size_t at = bytes.size() - 22 + 1; at-- > lowest;) {
    if (le.Get(at, 4) == kEndOfCentralDirectory) { eocd = at; break; }
  }
  if (eocd == std::string_view::npos) throw RunError(source + ": not a .npz file (no zip directory)");
  const uint64_t count = le.Get(eocd + 10, 2);
  uint64_t at = le.Get(eocd + 16, 4);
  std::vector<NpyArray> arrays;
  for (uint64_t i = 0; i < count; ++i) {
    if (le.Get(at, 4) != kCentralHeader) throw RunError(source + ": corrupt zip directory");
    const uint64_t method = le.Get(at + 10, 2);
    const uint32_t crc = static_cast<uint32_t>(le.Get(at + 16, 4));
    uint64_t compressed = le.Get(at + 20, 4), size = le.Get(at + 24, 4);
    const uint64_t name_len = le.Get(at + 28, 2), extra_len = le.Get(at + 30, 2), comment_len = le.Get(at + 32, 2);
    uint64_t local = le.Get(at + 42, 4);
    std::string name(le.Sub(at + 46, name_len));
    // Zip64: fields saturated at 0xFFFFFFFF are given in the extra field, in this order.
    for (uint64_t e = at + 46 + name_len; e + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = le.Get(e, 2), len = le.Get(e + 2, 2);
      if (id == 0x0001) {
        uint64_t f = e + 4;
        if (size == 0xFFFFFFFF) { size = le.Get(f, 8); f += 8; }
        if (compressed == 0xFFFFFFFF) { compressed = le.Get(f, 8); f += 8; }
        if (local == 0xFFFFFFFF) { local = le.Get(f, 8); }
      }
      e += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    const std::string where = source + ": entry '" + name + "'";
    if (method != 0) {
      throw RunError(where + " is compressed; this runtime reads stored entries (np.savez, not np.savez_compressed)");
    }
    if (compressed != size) throw RunError(where + ": stored entry with differing sizes");
    if (le.Get(local, 4) != kLocalHeader) throw RunError(where + ": corrupt local header");
    const uint64_t data_at = local + 30 + le.Get(local + 26, 2) + le.Get(local + 28, 2);
    const std::string_view data = le.Sub(data_at, size);
    if (Crc32(data) != crc) throw RunError(where + " is corrupt (CRC-32 mismatch)");
    NpyArray array = ParseNpy(data, where);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    array.name = std::move(name);
    arrays.push_back(std::move(array));
  }
  return arrays;
}

std::vector<NpyArray> ReadNpzFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw RunError(path + ": cannot open");
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxNpzBytes) throw RunError(path + ": not a regular file or too large");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (!in) throw RunError(path + ": read error");
  return ParseNpz(bytes, path);
}

std::string SerializeNpz(const std::vector<NpyArray>& arrays) {
  std::string out, directory;
  for (const NpyArray& a : arrays) {
    const std::string name = a.name + ".npy";
    const std::string npy = NpyBytes(a);
    if (npy.size() >= 0xFFFFFFFFull || out.size() >= 0xFFFFFFFFull) {
      throw RunError("output '" + a.name + "' is too large for a zip without zip64");
    }
    const uint32_t crc = Crc32(npy);
    const uint64_t local = out.size();
    // Local header: version 20, no flags, method 0 (stored), time/date 0 (1980-01-01).
    PutLe(out, kLocalHeader, 4); PutLe(out, 20, 2); PutLe(out, 0, 2); PutLe(out, 0, 2);
    PutLe(out, 0, 2); PutLe(out, 0x21, 2); PutLe(out, crc, 4);
    PutLe(out, npy.size(), 4); PutLe(out, npy.size(), 4); PutLe(out, name.size(), 2); PutLe(out, 0, 2);
    out += name;
    out += npy;
    PutLe(directory, kCentralHeader, 4); PutLe(directory, 20, 2); PutLe(directory, 20, 2);
    PutLe(directory, 0, 2); PutLe(directory, 0, 2); PutLe(directory, 0, 2); PutLe(directory, 0x21, 2);
    PutLe(directory, crc, 4); PutLe(directory, npy.size(), 4); PutLe(directory, npy.size(), 4);
    PutLe(directory, name.size(), 2); PutLe(directory, 0, 2); PutLe(directory, 0, 2);
    PutLe(directory, 0, 2); PutLe(directory, 0, 2); PutLe(directory, 0, 4); PutLe(directory, local, 4);
    directory += name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  PutLe(out, kEndOfCentralDirectory, 4); PutLe(out, 0, 2); PutLe(out, 0, 2);
  PutLe(out, arrays.size(), 2); PutLe(out, arrays.size(), 2);
  PutLe(out, directory.size(), 4); PutLe(out, directory_at, 4); PutLe(out, 0, 2);
  return out;
}

void WriteNpzFile(const std::vector<NpyArray>& arrays, const std::string& path) {
  const std::string bytes = SerializeNpz(arrays);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw RunError(path + ": cannot write");
}

}  // namespace gpu::runtime
