// ZIP reading for .npz files; see zip_archive.h for what is supported and guaranteed.
// Record layouts follow PKWARE's APPNOTE.TXT (sections 4.3.7 local header, 4.3.12 central
// directory header, 4.3.14-4.3.16 ZIP64 end records, 4.5.3 ZIP64 extra field).
#include "tools/io/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "hlo/diagnostic.h"
#include "tools/io/zip_format.h"

namespace io {
namespace {

using namespace zip_format;

[[noreturn]] void Fail(const std::string& archive, const std::string& message) {
  throw hlo::Error(archive + ": " + message);
}

// Bounds-checked little-endian reads from the archive bytes.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, const std::string& archive)
      : bytes_(bytes), archive_(archive) {}

  uint64_t Read(uint64_t offset, int width, const char* what) const {
    if (offset > bytes_.size() || bytes_.size() - offset < static_cast<uint64_t>(width)) {
      Fail(archive_, std::string("truncated archive (") + what + " at byte " +
                         std::to_string(offset) + " lies past the end of the file)");
    }
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i) {
      value = (value << 8) | static_cast<uint8_t>(bytes_[offset + static_cast<uint64_t>(i)]);
    }
    return value;
  }
  uint16_t U16(uint64_t offset, const char* what) const {
    return static_cast<uint16_t>(Read(offset, 2, what));
  }
  uint32_t U32(uint64_t offset, const char* what) const {
    return static_cast<uint32_t>(Read(offset, 4, what));
  }
  uint64_t U64(uint64_t offset, const char* what) const { return Read(offset, 8, what); }
  std::string_view Slice(uint64_t offset, uint64_t size, const std::string& what) const {
    if (offset > bytes_.size() || bytes_.size() - offset < size) {
      Fail(archive_, "truncated archive (" + what + " lies past the end of the file)");
    }
    return bytes_.substr(offset, size);
  }
  uint64_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
  const std::string& archive_;
};

struct CentralEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

struct DirectoryLocation {
  uint64_t entry_count = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

DirectoryLocation FindCentralDirectory(const ByteReader& in, const std::string& archive) {
  if (in.size() < kEndOfCentralDirSize) Fail(archive, "not a zip archive (too short)");
  // The end record sits at the end, followed only by a comment of at most 65535 bytes.
  uint64_t lowest =
      in.size() > kEndOfCentralDirSize + 0xFFFF ? in.size() - kEndOfCentralDirSize - 0xFFFF : 0;
  uint64_t end = in.size() - kEndOfCentralDirSize;
  for (;; --end) {
    if (in.U32(end, "end record") == kEndOfCentralDirSignature &&
        end + kEndOfCentralDirSize + in.U16(end + 20, "comment length") == in.size()) {
      break;
    }
    if (end == lowest) Fail(archive, "not a zip archive (no end of central directory record)");
  }
  if (in.U16(end + 4, "disk number") != 0 || in.U16(end + 6, "disk number") != 0) {
    Fail(archive, "multi-disk zip archives are not supported");
  }
  DirectoryLocation dir{in.U16(end + 10, "entry count"), in.U32(end + 16, "directory offset"),
                        in.U32(end + 12, "directory size")};
  bool needs_zip64 =
      dir.entry_count == kOverflow16 || dir.offset == kOverflow32 || dir.size == kOverflow32;
  if (end >= kZip64LocatorSize &&
      in.U32(end - kZip64LocatorSize, "zip64 locator") == kZip64LocatorSignature) {
    uint64_t record = in.U64(end - kZip64LocatorSize + 8, "zip64 end record offset");
    if (in.U32(record, "zip64 end record") != kZip64EndSignature) {
      Fail(archive, "corrupt zip64 end record at byte " + std::to_string(record));
    }
    dir.entry_count = in.U64(record + 32, "zip64 entry count");
    dir.size = in.U64(record + 40, "zip64 directory size");
    dir.offset = in.U64(record + 48, "zip64 directory offset");
  } else if (needs_zip64) {
    Fail(archive, "the end record needs zip64 fields but the archive has no zip64 locator");
  }
  if (dir.offset > in.size() || in.size() - dir.offset < dir.size) {
    Fail(archive, "central directory (" + std::to_string(dir.size) + " bytes at " +
                      std::to_string(dir.offset) + ") lies past the end of the file");
  }
  if (dir.entry_count > dir.size / kCentralHeaderSize) {
    Fail(archive, "central directory claims " + std::to_string(dir.entry_count) +
                      " entries, more than its " + std::to_string(dir.size) + " bytes can hold");
  }
  return dir;
}

// Replaces 32-bit fields that overflowed with their values from the ZIP64 extra field.
void ApplyZip64Extra(std::string_view extra, CentralEntry& entry, const std::string& where) {
  for (size_t pos = 0; pos + 4 <= extra.size();) {
    uint16_t id = static_cast<uint8_t>(extra[pos]) | static_cast<uint8_t>(extra[pos + 1]) << 8;
    size_t size = static_cast<uint8_t>(extra[pos + 2]) | static_cast<uint8_t>(extra[pos + 3]) << 8;
    pos += 4;
    if (size > extra.size() - pos) Fail(where, "extra field overruns its header");
    if (id == kZip64ExtraId) {
      ByteReader field(extra.substr(pos, size), where);
      uint64_t at = 0;
      // Only the fields whose 32-bit versions hold 0xFFFFFFFF are present, in this order.
      if (entry.uncompressed_size == kOverflow32) {
        entry.uncompressed_size = field.U64(at, "zip64 size");
        at += 8;
      }
      if (entry.compressed_size == kOverflow32) {
        entry.compressed_size = field.U64(at, "zip64 size");
        at += 8;
      }
      if (entry.local_header_offset == kOverflow32) {
        entry.local_header_offset = field.U64(at, "zip64 offset");
      }
      return;
    }
    pos += size;
  }
}

std::vector<CentralEntry> ReadCentralDirectory(const ByteReader& in, const std::string& archive) {
  DirectoryLocation dir = FindCentralDirectory(in, archive);
  std::vector<CentralEntry> entries;
  entries.reserve(dir.entry_count);
  uint64_t pos = dir.offset;
  for (uint64_t i = 0; i < dir.entry_count; ++i) {
    if (in.U32(pos, "central directory header") != kCentralHeaderSignature) {
      Fail(archive, "corrupt central directory (entry " + std::to_string(i) + " at byte " +
                        std::to_string(pos) + " has a bad signature)");
    }
    CentralEntry entry;
    entry.flags = in.U16(pos + 8, "flags");
    entry.method = in.U16(pos + 10, "method");
    entry.crc = in.U32(pos + 16, "crc");
    entry.compressed_size = in.U32(pos + 20, "compressed size");
    entry.uncompressed_size = in.U32(pos + 24, "uncompressed size");
    uint16_t name_length = in.U16(pos + 28, "name length");
    uint16_t extra_length = in.U16(pos + 30, "extra length");
    uint16_t comment_length = in.U16(pos + 32, "comment length");
    entry.local_header_offset = in.U32(pos + 42, "local header offset");
    entry.name = std::string(in.Slice(pos + kCentralHeaderSize, name_length, "entry name"));
    ApplyZip64Extra(in.Slice(pos + kCentralHeaderSize + name_length, extra_length, "extra field"),
                    entry, archive + ": entry '" + entry.name + "'");
    entries.push_back(std::move(entry));
    pos += kCentralHeaderSize + name_length + extra_length + comment_length;
  }
  return entries;
}

std::string Inflate(std::string_view compressed, uint64_t expected_size, const std::string& where) {
  std::string out(static_cast<size_t>(expected_size), '\0');
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) Fail(where, "cannot initialize zlib");
  // zlib counts in 32-bit uInt: feed input and output in chunks so entries above 4 GiB work.
  constexpr uint64_t kChunk = uint64_t{1} << 30;
  uint64_t in_pos = 0, out_pos = 0;
  // Once the declared size is filled, zlib writes into this spare byte: if it does, the entry
  // holds more data than it declares.
  unsigned char spare = 0;
  int status = Z_OK;
  for (;;) {
    if (stream.avail_in == 0 && in_pos < compressed.size()) {
      uint64_t n = std::min<uint64_t>(kChunk, compressed.size() - in_pos);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + in_pos));
      stream.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    if (stream.avail_out == 0) {
      uint64_t n = std::min<uint64_t>(kChunk, out.size() - out_pos);
      stream.next_out = n ? reinterpret_cast<Bytef*>(out.data() + out_pos) : &spare;
      stream.avail_out = n ? static_cast<uInt>(n) : 1;
      out_pos += n;
    }
    status = inflate(&stream, Z_NO_FLUSH);
    if (stream.total_out > expected_size) break;
    if (status == Z_STREAM_END || status == Z_DATA_ERROR || status == Z_NEED_DICT ||
        status == Z_MEM_ERROR || status == Z_STREAM_ERROR) {
      break;
    }
    // Z_BUF_ERROR: no progress possible; only fatal once all input has been handed over.
    if (status == Z_BUF_ERROR && stream.avail_in == 0 && in_pos == compressed.size()) break;
  }
  std::string message = stream.msg ? stream.msg : "";
  uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (produced > expected_size) {
    Fail(where, "inflates to more than its declared " + std::to_string(expected_size) + " bytes");
  }
  if (status != Z_STREAM_END) {
    Fail(where, status == Z_DATA_ERROR ? "corrupt deflate data (" + message + ")"
                                       : std::string("truncated deflate data"));
  }
  if (produced != expected_size) {
    Fail(where, "inflates to " + std::to_string(produced) + " bytes but declares " +
                    std::to_string(expected_size));
  }
  return out;
}

std::string ExtractEntry(const ByteReader& in, const CentralEntry& entry,
                         const std::string& archive) {
  std::string where = archive + ": entry '" + entry.name + "'";
  if (entry.flags & 1) Fail(where, "is encrypted (not supported)");
  uint64_t pos = entry.local_header_offset;
  if (in.U32(pos, "local header") != kLocalHeaderSignature) {
    Fail(where, "has a corrupt local header at byte " + std::to_string(pos));
  }
  uint64_t data_offset =
      pos + kLocalHeaderSize + in.U16(pos + 26, "name length") + in.U16(pos + 28, "extra length");
  std::string_view compressed =
      in.Slice(data_offset, entry.compressed_size, "the data of entry '" + entry.name + "'");
  uint64_t limit = static_cast<uint64_t>(hlo::GlobalLimits().max_bytes_per_allocation) + (1u << 20);
  if (entry.uncompressed_size > limit) {
    Fail(where, "declares " + std::to_string(entry.uncompressed_size) +
                    " bytes, beyond the allocation limit");
  }
  std::string data;
  switch (entry.method) {
    case kMethodStored:
      if (entry.uncompressed_size != entry.compressed_size) {
        Fail(where, "is stored but its sizes differ (" + std::to_string(entry.compressed_size) +
                        " vs " + std::to_string(entry.uncompressed_size) + ")");
      }
      data = std::string(compressed);
      break;
    case kMethodDeflate:
      if (entry.uncompressed_size > entry.compressed_size * kMaxDeflateRatio + 64) {
        Fail(where, "declares " + std::to_string(entry.uncompressed_size) + " bytes from " +
                        std::to_string(entry.compressed_size) +
                        " compressed bytes, beyond what deflate can produce");
      }
      data = Inflate(compressed, entry.uncompressed_size, where);
      break;
    default:
      Fail(where, "uses compression method " + std::to_string(entry.method) +
                      " (only stored and deflate are supported)");
  }
  if (Crc32(data) != entry.crc) Fail(where, "fails its CRC-32 check (corrupt data)");
  return data;
}

}  // namespace

std::vector<ZipEntry> ReadZip(std::string_view bytes, const std::string& archive_name) {
  ByteReader in(bytes, archive_name);
  std::vector<ZipEntry> result;
  for (const CentralEntry& entry : ReadCentralDirectory(in, archive_name)) {
    result.push_back({entry.name, ExtractEntry(in, entry, archive_name)});
  }
  return result;
}

}  // namespace io
