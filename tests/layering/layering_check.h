// The layer DAG of docs/architecture.md as data, and a scan of every source file's
// `#include "…"` lines against it.
//
// Why a scan and not only CMake: every library puts the repository root on its include path, so
// an #include across a forbidden edge compiles (headers and inline code need no link), and a
// binary that links both layers (the CLI, the tests) links it too. This check is what fails.
//
// Guarantees: ScanTree reads each C++ source/header (.h .cc .def .inc) under the scanned top-level
// folders once, in sorted path order, and reports every quoted include whose target lies in a
// layer the includer may not use (directly or through the layers it may use), plus every source
// file that lies in no layer. Includes that resolve to no repository path (system and generated
// headers such as hlo.pb.h) are ignored; `#include <…>` is never checked.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace layering {

struct Layer {
  std::string name;                   // "compiler"
  std::vector<std::string> paths;     // path prefixes relative to the root ("compiler/"); a
                                      // prefix without a trailing '/' matches one file exactly
  std::vector<std::string> may_use;   // layer names this layer may include directly
  bool uses_everything = false;       // tools/retarget, tests, bench
};

// The DAG (docs/architecture.md, "How the layering is enforced"; mirrors the CMake link graph).
const std::vector<Layer>& Layers();

// The layer a repository-relative path lies in: the longest matching prefix; nullopt if none.
std::optional<std::string> LayerOf(const std::string& relative_path,
                                   const std::vector<Layer>& layers = Layers());

// True when `from` may include a file of layer `to` (itself, a may_use layer, or a layer one of
// those may use: the transitive closure, as CMake's PUBLIC links make it).
bool MayUse(const std::string& from, const std::string& to,
            const std::vector<Layer>& layers = Layers());

// One finding: "hlo/ir.h:12: #include \"compiler/pass.h\": layer hlo may not use layer compiler
// (hlo may use: -)".
struct Violation {
  std::string file;  // relative to the root
  int line = 0;
  std::string message;
  std::string ToString() const;
};

// Scans the folders `top_level` (e.g. "hlo", "compiler", …) under `root`.
std::vector<Violation> ScanTree(const std::filesystem::path& root,
                                const std::vector<std::string>& top_level,
                                const std::vector<Layer>& layers = Layers());

// The top-level folders that hold project C++ code.
const std::vector<std::string>& SourceFolders();

}  // namespace layering
