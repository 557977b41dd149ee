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

std::filesystem::path KernelCache::PathOf(const std::string& key) const {
  return directory_ / (key + ".o");
}

std::optional<std::string> KernelCache::Find(const std::string& key) const {
  std::ifstream in(PathOf(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad() || bytes.empty()) return std::nullopt;
  return bytes;
}

bool KernelCache::Store(const std::string& key, const std::string& object) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  // A name no other process writing the same key uses; renamed over the entry when whole.
  std::ostringstream temporary_name;
  temporary_name << key << ".tmp." << ::getpid() << "." << std::hex
                 << reinterpret_cast<uintptr_t>(&object);
  const std::filesystem::path temporary = directory_ / temporary_name.str();
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
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
