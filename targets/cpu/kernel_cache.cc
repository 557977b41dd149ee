// KernelCache (see kernel_cache.h).
#include "targets/cpu/kernel_cache.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace cpu {

std::filesystem::path DefaultKernelCacheDirectory() {
  if (const char* explicit_dir = std::getenv("RETARGET_CACHE_DIR")) {
    const std::string value = explicit_dir;
    if (value.empty() || value == "off") return {};
    return value;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::filesystem::path(xdg) / "retarget" / "cpu-kernels";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "retarget" / "cpu-kernels";
  return {};
}

namespace {

// An entry: this line, the number of objects on a line, then each object as its size in bytes
// on a line followed by the bytes.
constexpr char kEntryMagic[] = "retarget cpu objects 1\n";

std::string Encode(const std::vector<std::string>& objects) {
  std::string entry = kEntryMagic + std::to_string(objects.size()) + "\n";
  for (const std::string& object : objects) entry += std::to_string(object.size()) + "\n" + object;
  return entry;
}

// The number on the line at `at` (advanced past it), or nullopt.
std::optional<size_t> ReadCount(const std::string& entry, size_t& at) {
  const size_t end = entry.find('\n', at);
  if (end == std::string::npos || end == at || end - at > 19) return std::nullopt;
  size_t value = 0;
  for (size_t i = at; i < end; ++i) {
    if (entry[i] < '0' || entry[i] > '9') return std::nullopt;
    value = value * 10 + static_cast<size_t>(entry[i] - '0');
  }
  at = end + 1;
  return value;
}

std::optional<std::vector<std::string>> Decode(const std::string& entry) {
  const std::string magic = kEntryMagic;
  if (entry.compare(0, magic.size(), magic) != 0) return std::nullopt;
  size_t at = magic.size();
  const std::optional<size_t> count = ReadCount(entry, at);
  if (!count || *count == 0 || *count > entry.size()) return std::nullopt;
  std::vector<std::string> objects;
  for (size_t i = 0; i < *count; ++i) {
    const std::optional<size_t> size = ReadCount(entry, at);
    if (!size || *size > entry.size() - at) return std::nullopt;
    objects.push_back(entry.substr(at, *size));
    at += *size;
  }
  if (at != entry.size()) return std::nullopt;
  return objects;
}

}  // namespace

std::filesystem::path KernelCache::PathOf(const std::string& key) const {
  return directory_ / (key + ".objects");
}

std::optional<std::vector<std::string>> KernelCache::Find(const std::string& key) const {
  std::ifstream in(PathOf(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return Decode(bytes);
}

bool KernelCache::Store(const std::string& key, const std::vector<std::string>& objects) const {
  const std::string entry = Encode(objects);
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  // A name no other process writing the same key uses; renamed over the entry when whole.
  std::ostringstream temporary_name;
  temporary_name << key << ".tmp." << ::getpid() << "." << std::hex
                 << reinterpret_cast<uintptr_t>(&objects);
  const std::filesystem::path temporary = directory_ / temporary_name.str();
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(entry.data(), static_cast<std::streamsize>(entry.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, PathOf(key), error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return false;
  }
  return true;
}

}  // namespace cpu
