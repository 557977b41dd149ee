// ZIP archives for .npz files, through libzip (Debian libzip-dev).
//
// Reading: STORED and DEFLATE entries, ZIP64 included, the central directory checked against
// the local headers and every entry's CRC-32 checked (libzip). Allocation is bounded before any
// entry is read: an entry may not claim more bytes than its compressed data could expand to
// (DEFLATE's maximum ratio) nor more than GlobalLimits() allows, and an entry that holds more or
// less than it declares is refused. Encrypted entries and other methods are refused.
//
// Writing: STORED entries (as np.savez writes), dated 1980-01-01 so that equal arrays give
// byte-identical files; libzip switches to ZIP64 records where a size or offset needs them.
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

std::string WriteZip(const std::vector<ZipEntry>& entries);

}  // namespace io
