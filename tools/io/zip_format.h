// ZIP record constants and the CRC shared by the .npz reader (zip_archive.cc) and writer
// (zip_writer.cc). Layouts: PKWARE APPNOTE.TXT 4.3.7 (local header), 4.3.12 (central directory
// header), 4.3.14-4.3.16 (ZIP64 end records), 4.5.3 (ZIP64 extra field).
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace io::zip_format {

inline constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
inline constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
inline constexpr uint32_t kEndOfCentralDirSignature = 0x06054b50;
inline constexpr uint32_t kZip64EndSignature = 0x06064b50;
inline constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
inline constexpr uint16_t kZip64ExtraId = 0x0001;
inline constexpr size_t kLocalHeaderSize = 30;
inline constexpr size_t kCentralHeaderSize = 46;
inline constexpr size_t kEndOfCentralDirSize = 22;
inline constexpr size_t kZip64EndSize = 56;
inline constexpr size_t kZip64LocatorSize = 20;
inline constexpr uint32_t kOverflow32 = 0xFFFFFFFFu;
inline constexpr uint16_t kOverflow16 = 0xFFFFu;
// DEFLATE cannot expand data by more than about 1032:1 (a 258-byte match in ~2 bits); any entry
// claiming more is corrupt, and refusing it bounds what a small hostile file can make us allocate.
inline constexpr uint64_t kMaxDeflateRatio = 1032;
inline constexpr uint16_t kMethodStored = 0;
inline constexpr uint16_t kMethodDeflate = 8;

inline uint32_t Crc32(std::string_view data) {
  return static_cast<uint32_t>(
      crc32_z(0L, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

}  // namespace io::zip_format
