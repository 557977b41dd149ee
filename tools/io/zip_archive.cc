// ZIP reading and writing for .npz files through libzip (Debian's libzip-dev); see
// zip_archive.h for what is supported and guaranteed. libzip parses the container (end records,
// ZIP64, central directory, local headers, inflate, CRC); this file adds what .npz reading must
// guarantee on top: bounded allocation before any entry is read, the entry's declared size
// checked against what it really holds, and messages that name the archive and the entry.
#include "tools/io/zip_archive.h"

#include <zip.h>

#include <cstdint>
#include <memory>

#include "hlo/diagnostic.h"

namespace io {
namespace {

// DEFLATE's best ratio is 1032:1 (258-byte matches coded in 2 bits), so a claim beyond it is
// corrupt, whatever the entry says (the slack covers the stream's few header bytes).
constexpr uint64_t kMaxDeflateRatio = 1032;

[[noreturn]] void Fail(const std::string& where, const std::string& message) {
  throw hlo::Error(where + ": " + message);
}

std::string Message(zip_error_t* error) { return zip_error_strerror(error); }

struct Discard {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct Close {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using Archive = std::unique_ptr<zip_t, Discard>;
using File = std::unique_ptr<zip_file_t, Close>;

// The archive over `bytes` (not copied: they outlive it), read-only, its directory checked for
// consistency with the local headers.
Archive Open(std::string_view bytes, const std::string& name) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) Fail(name, "cannot read the archive (" + Message(&error) + ")");
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (archive == nullptr) {
    zip_source_free(source);
    const int code = zip_error_code_zip(&error);
    const std::string detail = Message(&error);
    zip_error_fini(&error);
    if (code == ZIP_ER_NOZIP) Fail(name, "not a zip archive (bad magic: " + detail + ")");
    Fail(name, "corrupt zip archive (" + detail + ")");
  }
  return Archive(archive);
}

std::string Extract(zip_t* archive, zip_uint64_t index, const zip_stat_t& stat,
                    const std::string& where) {
  if (stat.encryption_method != ZIP_EM_NONE) Fail(where, "is encrypted (not supported)");
  const uint64_t limit =
      static_cast<uint64_t>(hlo::GlobalLimits().max_bytes_per_allocation) + (1u << 20);
  if (stat.size > limit) {
    Fail(where, "declares " + std::to_string(stat.size) + " bytes, beyond the allocation limit");
  }
  switch (stat.comp_method) {
    case ZIP_CM_STORE:
      if (stat.size != stat.comp_size) {
        Fail(where, "is stored but its sizes differ (" + std::to_string(stat.comp_size) +
                        " vs " + std::to_string(stat.size) + ")");
      }
      break;
    case ZIP_CM_DEFLATE:
      if (stat.size > stat.comp_size * kMaxDeflateRatio + 64) {
        Fail(where, "declares " + std::to_string(stat.size) + " bytes from " +
                        std::to_string(stat.comp_size) +
                        " compressed bytes, beyond what deflate can produce");
      }
      break;
    default:
      Fail(where, "uses compression method " + std::to_string(stat.comp_method) +
                      " (only stored and deflate are supported)");
  }
  File file(zip_fopen_index(archive, index, 0));
  if (!file) {
    Fail(where, "cannot be opened: its local header is corrupt or inconsistent (" +
                    Message(zip_get_error(archive)) + ")");
  }
  // One byte more than declared: reading it means the entry holds more than it says. libzip
  // checks the CRC-32 once the data ends.
  std::string data(static_cast<size_t>(stat.size) + 1, '\0');
  uint64_t produced = 0;
  while (produced < data.size()) {
    const zip_int64_t n = zip_fread(file.get(), data.data() + produced, data.size() - produced);
    if (n < 0) {
      zip_error_t* error = zip_file_get_error(file.get());
      const int code = zip_error_code_zip(error);
      if (code == ZIP_ER_CRC) Fail(where, "fails its CRC-32 check (corrupt data)");
      if (produced >= stat.size) {
        Fail(where, "inflates to more than its declared " + std::to_string(stat.size) + " bytes");
      }
      // libzip finds the data through the local header: a bad one and bad data look alike.
      Fail(where, "has a corrupt local header or corrupt data (libzip: " + Message(error) + ")");
    }
    if (n == 0) break;
    produced += static_cast<uint64_t>(n);
  }
  if (produced > stat.size) {
    Fail(where, "inflates to more than its declared " + std::to_string(stat.size) + " bytes");
  }
  if (produced != stat.size) {
    Fail(where, "inflates to " + std::to_string(produced) + " bytes but declares " +
                    std::to_string(stat.size));
  }
  data.resize(static_cast<size_t>(produced));
  return data;
}

}  // namespace

std::vector<ZipEntry> ReadZip(std::string_view bytes, const std::string& archive_name) {
  Archive archive = Open(bytes, archive_name);
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  std::vector<ZipEntry> result;
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive.get(), index, ZIP_FL_ENC_RAW, &stat) != 0) {
      Fail(archive_name, "corrupt central directory (entry " + std::to_string(i) + ": " +
                             Message(zip_get_error(archive.get())) + ")");
    }
    const zip_uint64_t needed = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                                ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
    if ((stat.valid & needed) != needed) {
      Fail(archive_name, "corrupt central directory (entry " + std::to_string(i) + ")");
    }
    const std::string name = stat.name;
    result.push_back({name, Extract(archive.get(), index, stat,
                                    archive_name + ": entry '" + name + "'")});
  }
  return result;
}

std::string WriteZip(const std::vector<ZipEntry>& entries) {
  // libzip writes no file for an archive without entries; np.savez() writes the end record
  // alone (signature PK\5\6, then zero counts, sizes and comment length).
  if (entries.empty()) return std::string("PK\x05\x06", 4) + std::string(18, '\0');
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (buffer == nullptr) throw hlo::Error("cannot create a zip archive: " + Message(&error));
  zip_source_keep(buffer);  // read back after zip_close
  std::unique_ptr<zip_source_t, decltype(&zip_source_free)> kept(buffer, zip_source_free);
  Archive archive(zip_open_from_source(buffer, ZIP_TRUNCATE, &error));
  if (!archive) throw hlo::Error("cannot create a zip archive: " + Message(&error));
  for (const ZipEntry& entry : entries) {
    zip_source_t* data = zip_source_buffer(archive.get(), entry.data.data(), entry.data.size(), 0);
    const zip_int64_t index =
        data == nullptr ? -1
                        : zip_file_add(archive.get(), entry.name.c_str(), data, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      if (data != nullptr) zip_source_free(data);
      throw hlo::Error("cannot add '" + entry.name + "' to a zip archive: " +
                       Message(zip_get_error(archive.get())));
    }
    // Stored, as np.savez writes, and dated 1980-01-01 so equal arrays give equal files.
    const auto at = static_cast<zip_uint64_t>(index);
    if (zip_set_file_compression(archive.get(), at, ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_dostime(archive.get(), at, 0, (0 << 9) | (1 << 5) | 1, 0) != 0) {
      throw hlo::Error("cannot add '" + entry.name + "' to a zip archive: " +
                       Message(zip_get_error(archive.get())));
    }
  }
  if (zip_close(archive.get()) != 0) {
    throw hlo::Error("cannot write a zip archive: " + Message(zip_get_error(archive.get())));
  }
  archive.release();  // closed
  zip_stat_t stat;
  if (zip_source_stat(buffer, &stat) != 0 || zip_source_open(buffer) != 0) {
    throw hlo::Error("cannot read back a zip archive: " + Message(zip_source_error(buffer)));
  }
  std::string bytes(static_cast<size_t>(stat.size), '\0');
  const zip_int64_t n = zip_source_read(buffer, bytes.data(), bytes.size());
  zip_source_close(buffer);
  if (n != static_cast<zip_int64_t>(bytes.size())) {
    throw hlo::Error("cannot read back a zip archive: " + Message(zip_source_error(buffer)));
  }
  return bytes;
}

}  // namespace io
