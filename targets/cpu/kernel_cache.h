// An on-disk cache of the CPU backend's compiled kernels: one object file per module, named by
// CompiledObjectKey (jit.h) — a hash of the kernels' IR before optimization and of everything
// else code generation depends on — so compiling the same module again on the same machine
// loads the object instead of running LLVM's O3 pipeline and code generator (gemma3_1b: seconds
// of LLVM work).
//
// Guarantees: an entry is written to a temporary file and renamed into place, so a reader sees
// a whole object or none; a cache that cannot be read or written (permissions, a full disk)
// costs the compile nothing but the time — it never fails it; entries are never trusted beyond
// their key (a corrupt object is rejected by the JIT's linker, and the compile then falls back
// to LLVM). Nothing outside the directory is touched.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace cpu {

// Where `retarget` keeps compiled kernels: $RETARGET_CACHE_DIR when set (empty or "off":
// nowhere), else $XDG_CACHE_HOME/retarget/cpu-kernels, else $HOME/.cache/retarget/cpu-kernels;
// empty when none of them applies.
std::filesystem::path DefaultKernelCacheDirectory();

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path directory) : directory_(std::move(directory)) {}
  // The object stored under `key`, if any.
  std::optional<std::string> Find(const std::string& key) const;
  // Stores `object` under `key`; false (and nothing left behind) when the directory cannot
  // take it.
  bool Store(const std::string& key, const std::string& object) const;

 private:
  std::filesystem::path PathOf(const std::string& key) const;
  std::filesystem::path directory_;
};

}  // namespace cpu
