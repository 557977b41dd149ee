// File helpers of the seed writers (proto_seed_writer, reader_seed_writer): whole files in and
// out as bytes. Seeds are best effort, so failures are reported by value, not thrown.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fuzz {

// False when the file could not be written completely.
inline bool WriteSeedFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

// The file's bytes ("" when it cannot be read: the reader then rejects the seed).
inline std::string ReadSeedFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace fuzz
