// An on-disk cache of the CPU backend's compiled kernels: one entry per module holding its
// object files (the partitions of parallel_codegen.h, in order), named by CompiledObjectKey
// (jit.h) — a hash of the kernels' IR before optimization and of everything else code
// generation depends on — so compiling the same module again on the same machine loads the
// objects instead of running LLVM's O3 pipeline and code generator (gemma3_1b: seconds of LLVM
// work).
//
// Guarantees: an entry is written to a temporary file and renamed into place, so a reader sees
// a whole entry or none; an entry whose framing does not parse is not found; a cache that
// cannot be read or written (permissions, a full disk) costs the compile nothing but the time —
// it never fails it; entries are never trusted beyond their key (a corrupt object is rejected
// by the JIT's linker, and the compile then falls back to LLVM). Nothing outside the directory
// is touched.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cpu {

// Where `retarget` keeps compiled kernels: $RETARGET_CACHE_DIR when set (empty or "off":
// nowhere), else $XDG_CACHE_HOME/retarget/cpu-kernels, else $HOME/.cache/retarget/cpu-kernels;
// empty when none of them applies.
std::filesystem::path DefaultKernelCacheDirectory();

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path directory) : directory_(std::move(directory)) {}
  // The objects stored under `key`, if any.
  std::optional<std::vector<std::string>> Find(const std::string& key) const;
  // Stores `objects` under `key`; false (and nothing left behind) when the directory cannot
  // take them.
  bool Store(const std::string& key, const std::vector<std::string>& objects) const;

 private:
  std::filesystem::path PathOf(const std::string& key) const;
  std::filesystem::path directory_;
};

}  // namespace cpu
