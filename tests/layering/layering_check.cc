// The layer table and the include scan (layering_check.h).
#include "tests/layering/layering_check.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

namespace layering {
namespace fs = std::filesystem;

// One row per layer, in pipeline order. `may_use` lists direct edges; MayUse closes them.
const std::vector<Layer>& Layers() {
  static const std::vector<Layer> layers = {
      {"hlo", {"hlo/"}, {}},
      {"compiler", {"compiler/"}, {"hlo"}},
      {"backend-api", {"targets/backend.h"}, {"hlo"}},
      {"interp", {"targets/interp/"}, {"backend-api", "compiler"}},
      {"llvm-emitter", {"targets/llvm/"}, {"compiler"}},
      {"cpu", {"targets/cpu/"}, {"compiler", "backend-api", "llvm-emitter"}},
      {"gpu", {"targets/gpu/"}, {"compiler", "backend-api", "llvm-emitter"}},
      // The accelerator is one unit below its backend: the ISA and architecture table
      // (retarget_simulator_isa), the SystemC model above it, the systolic backend above that.
      {"accelerator-isa", {"simulator/isa/"}, {"hlo"}},
      {"simulator", {"simulator/"}, {"accelerator-isa"}},
      {"systolic-backend", {"targets/systolic/"}, {"compiler", "backend-api", "simulator"}},
      // Every target's description by name (each lives beside its backend).
      {"target-catalogue",
       {"targets/descriptions.h", "targets/descriptions.cc"},
       {"interp", "cpu", "gpu", "systolic-backend"}},
      {"io", {"tools/io/"}, {"hlo"}},
      {"report", {"tools/report/"}, {"compiler", "target-catalogue", "accelerator-isa"}},
      {"sweep", {"tools/sweep/"}, {"report"}},
      {"cli", {"tools/retarget/"}, {}, true},
      // The Python package's extension: the command line's work, called from Python.
      {"python", {"tools/python/"}, {}, true},
      {"tests", {"tests/"}, {}, true},
      // Fuzz targets are test tooling: each drives one reader (hlo, io, the ISA, the GPU
      // artifact, SCALE-Sim) and may build seeds with test helpers.
      {"fuzz", {"fuzz/"}, {}, true},
      {"bench", {"bench/"}, {}, true},
  };
  return layers;
}

const std::vector<std::string>& SourceFolders() {
  static const std::vector<std::string> folders = {"hlo",       "compiler", "targets", "simulator",
                                                   "tools",     "tests",    "bench",   "fuzz"};
  return folders;
}

namespace {

const Layer* Find(const std::string& name, const std::vector<Layer>& layers) {
  for (const Layer& layer : layers) {
    if (layer.name == name) return &layer;
  }
  return nullptr;
}

bool Matches(const std::string& path, const std::string& prefix) {
  if (prefix.empty()) return false;
  if (prefix.back() == '/') return path.compare(0, prefix.size(), prefix) == 0;
  return path == prefix;
}

std::string Join(const std::vector<std::string>& names) {
  if (names.empty()) return "-";
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// "a/b/../c.h" -> "a/c.h"; nullopt when it leaves the root.
std::optional<std::string> Normalize(const fs::path& path) {
  fs::path normal = path.lexically_normal();
  std::string text = normal.generic_string();
  if (text.empty() || text == "." || text.rfind("..", 0) == 0 || normal.is_absolute()) {
    return std::nullopt;
  }
  return text;
}

}  // namespace

std::optional<std::string> LayerOf(const std::string& path, const std::vector<Layer>& layers) {
  const Layer* best = nullptr;
  size_t best_length = 0;
  for (const Layer& layer : layers) {
    for (const std::string& prefix : layer.paths) {
      if (Matches(path, prefix) && prefix.size() > best_length) {
        best = &layer;
        best_length = prefix.size();
      }
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->name;
}

bool MayUse(const std::string& from, const std::string& to, const std::vector<Layer>& layers) {
  if (from == to) return true;
  std::vector<std::string> pending = {from};
  std::set<std::string> seen = {from};
  while (!pending.empty()) {
    const Layer* layer = Find(pending.back(), layers);
    pending.pop_back();
    if (layer == nullptr) continue;
    if (layer->uses_everything) return true;
    for (const std::string& next : layer->may_use) {
      if (next == to) return true;
      if (seen.insert(next).second) pending.push_back(next);
    }
  }
  return false;
}

std::string Violation::ToString() const {
  return file + ":" + std::to_string(line) + ": " + message;
}

std::vector<Violation> ScanTree(const fs::path& root, const std::vector<std::string>& top_level,
                                const std::vector<Layer>& layers) {
  static const std::set<std::string> kSourceExtensions = {".h", ".cc", ".def", ".inc"};
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> files;
  for (const std::string& folder : top_level) {
    const fs::path dir = root / folder;
    if (!fs::is_directory(dir)) continue;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->is_regular_file() && kSourceExtensions.count(it->path().extension().string())) {
        files.push_back(fs::relative(it->path(), root).generic_string());
      }
    }
  }
  std::sort(files.begin(), files.end());

  std::vector<Violation> violations;
  for (const std::string& file : files) {
    const std::optional<std::string> from = LayerOf(file, layers);
    if (!from) {
      violations.push_back({file, 1, "the file lies in no layer: add its folder to the table "
                                     "in tests/layering/layering_check.cc"});
      continue;
    }
    std::ifstream in(root / file);
    std::string text;
    int line_number = 0;
    while (std::getline(in, text)) {
      ++line_number;
      std::smatch match;
      if (text.find("include") == std::string::npos || !std::regex_search(text, match, kInclude)) {
        continue;
      }
      const std::string included = match[1];
      // The compiler looks next to the includer first, then on the include path (the root).
      std::optional<std::string> target;
      const fs::path sibling = fs::path(file).parent_path() / included;
      if (fs::exists(root / sibling)) target = Normalize(sibling);
      if (!target && fs::exists(root / included)) target = Normalize(included);
      if (!target) continue;  // system or generated header
      const std::optional<std::string> to = LayerOf(*target, layers);
      if (!to || MayUse(*from, *to, layers)) continue;
      const Layer* layer = Find(*from, layers);
      violations.push_back(
          {file, line_number,
           "#include \"" + included + "\": layer " + *from + " may not use layer " + *to + " (" +
               *from + " may use: " + Join(layer ? layer->may_use : std::vector<std::string>{}) +
               "; docs/architecture.md)"});
    }
  }
  return violations;
}

}  // namespace layering
