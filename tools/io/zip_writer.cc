// ZIP writing for .npz files: STORED entries, with ZIP64 records where a size or offset needs them
// (or when forced). Output is reproducible: a fixed 1980-01-01 timestamp, no extra metadata.
#include <cstdint>

#include "tools/io/zip_archive.h"
#include "tools/io/zip_format.h"

namespace io {
namespace {

using namespace zip_format;

void Put(std::string& out, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

}  // namespace

std::string WriteZip(const std::vector<ZipEntry>& entries, const ZipWriteOptions& options) {
  constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // fixed: reproducible files
  std::string out, directory;
  bool archive_zip64 = options.force_zip64 || entries.size() >= kOverflow16;
  for (const ZipEntry& entry : entries) {
    uint64_t size = entry.data.size();
    uint64_t offset = out.size();
    bool sizes64 = options.force_zip64 || size >= kOverflow32;
    bool offset64 = options.force_zip64 || offset >= kOverflow32;
    archive_zip64 = archive_zip64 || sizes64 || offset64;
    uint32_t crc = Crc32(entry.data);
    uint16_t version = (sizes64 || offset64) ? 45 : 20;  // 4.5: zip64, 2.0: plain

    // Local header: when zip64, both sizes live in the extra field.
    Put(out, kLocalHeaderSignature, 4);
    Put(out, version, 2);
    Put(out, 0, 2);  // flags
    Put(out, kMethodStored, 2);
    Put(out, 0, 2);  // time
    Put(out, kDosDate1980, 2);
    Put(out, crc, 4);
    Put(out, sizes64 ? kOverflow32 : size, 4);
    Put(out, sizes64 ? kOverflow32 : size, 4);
    Put(out, entry.name.size(), 2);
    Put(out, sizes64 ? 20 : 0, 2);
    out += entry.name;
    if (sizes64) {
      Put(out, kZip64ExtraId, 2);
      Put(out, 16, 2);
      Put(out, size, 8);
      Put(out, size, 8);
    }
    out += entry.data;

    // Central directory header: only the overflowed fields go to the extra field.
    int extra_size = (sizes64 ? 16 : 0) + (offset64 ? 8 : 0);
    Put(directory, kCentralHeaderSignature, 4);
    Put(directory, version, 2);  // made by (MS-DOS attributes)
    Put(directory, version, 2);
    Put(directory, 0, 2);
    Put(directory, kMethodStored, 2);
    Put(directory, 0, 2);
    Put(directory, kDosDate1980, 2);
    Put(directory, crc, 4);
    Put(directory, sizes64 ? kOverflow32 : size, 4);
    Put(directory, sizes64 ? kOverflow32 : size, 4);
    Put(directory, entry.name.size(), 2);
    Put(directory, extra_size ? extra_size + 4 : 0, 2);
    Put(directory, 0, 2);  // comment
    Put(directory, 0, 2);  // disk
    Put(directory, 0, 2);  // internal attributes
    Put(directory, 0, 4);  // external attributes
    Put(directory, offset64 ? kOverflow32 : offset, 4);
    directory += entry.name;
    if (extra_size) {
      Put(directory, kZip64ExtraId, 2);
      Put(directory, extra_size, 2);
      if (sizes64) {
        Put(directory, size, 8);
        Put(directory, size, 8);
      }
      if (offset64) Put(directory, offset, 8);
    }
  }
  uint64_t directory_offset = out.size();
  uint64_t directory_size = directory.size();
  out += directory;
  archive_zip64 = archive_zip64 || directory_offset >= kOverflow32 || directory_size >= kOverflow32;
  if (archive_zip64) {
    uint64_t record_offset = out.size();
    Put(out, kZip64EndSignature, 4);
    Put(out, kZip64EndSize - 12, 8);  // size of the rest of the record
    Put(out, 45, 2);
    Put(out, 45, 2);
    Put(out, 0, 4);
    Put(out, 0, 4);
    Put(out, entries.size(), 8);
    Put(out, entries.size(), 8);
    Put(out, directory_size, 8);
    Put(out, directory_offset, 8);
    Put(out, kZip64LocatorSignature, 4);
    Put(out, 0, 4);
    Put(out, record_offset, 8);
    Put(out, 1, 4);
  }
  Put(out, kEndOfCentralDirSignature, 4);
  Put(out, 0, 2);
  Put(out, 0, 2);
  uint64_t count16 = archive_zip64 ? kOverflow16 : entries.size();
  Put(out, count16, 2);
  Put(out, count16, 2);
  Put(out, archive_zip64 ? kOverflow32 : directory_size, 4);
  Put(out, archive_zip64 ? kOverflow32 : directory_offset, 4);
  Put(out, 0, 2);
  return out;
}

}  // namespace io
