// A minimal .npz reader and writer for the thin runtime (numpy's format: a zip of .npy files).
//
// Guarantees: plain C++17, standard library only (the runtime must not link tools/io or zlib).
// Reads what np.savez writes: stored (uncompressed) entries, zip64 extra fields, .npy format
// versions 1-3, C order (Fortran order only for rank <= 1). Compressed entries (np.savez_compressed)
// are rejected with a message saying so. Writes stored entries with .npy version 1.0 headers that
// numpy.load reads. Every malformed file is a RunError naming the file; sizes are checked against
// the file before any allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpu::runtime {

struct NpyArray {
  std::string name;   // entry name without ".npy"
  std::string descr;  // numpy dtype descriptor, e.g. "<f4", "|b1"
  std::vector<int64_t> shape;
  std::string data;   // C-order element bytes
};

std::vector<NpyArray> ParseNpz(std::string_view bytes, const std::string& source_name);
std::vector<NpyArray> ReadNpzFile(const std::string& path);

std::string SerializeNpz(const std::vector<NpyArray>& arrays);
void WriteNpzFile(const std::vector<NpyArray>& arrays, const std::string& path);

// Bytes per element of a numpy descriptor this runtime knows ("<f4" -> 4), or 0.
int NpyDescrBytes(std::string_view descr);

}  // namespace gpu::runtime
