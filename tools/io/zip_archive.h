// The subset of the ZIP format that .npz files use (PKWARE APPNOTE 6.3).
//
// Reading: STORED (method 0) and DEFLATE (method 8, raw inflate via zlib) entries, located through
// the central directory, with ZIP64 sizes and offsets where the 32-bit fields overflow. Every
// entry's CRC-32 is checked. Allocation is bounded: an entry may not claim more bytes than its
// compressed data could expand to (DEFLATE's maximum ratio) nor more than GlobalLimits() allows.
// Encrypted entries, other methods and multi-disk archives are refused.
//
// Writing: STORED entries only, switching to ZIP64 records when a size or offset needs it (or
// when forced, so the path can be tested on small archives).
//
// Every error is an hlo::Error whose message starts with the archive's name (and the entry's).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace io {

struct ZipEntry {
  std::string name;
  std::string data;  // uncompressed bytes
};

// `archive_name` is used in error messages only.
std::vector<ZipEntry> ReadZip(std::string_view bytes, const std::string& archive_name);

struct ZipWriteOptions {
  bool force_zip64 = false;
};
std::string WriteZip(const std::vector<ZipEntry>& entries, const ZipWriteOptions& options = {});

}  // namespace io
