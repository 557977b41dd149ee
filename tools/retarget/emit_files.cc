// WriteEmitted (emit_files.h).
#include "tools/retarget/emit_files.h"

#include <filesystem>
#include <iostream>

#include "tools/retarget/cli.h"

namespace cli {
namespace {

// OUT.ll -> OUT.opt.ll, OUT.o -> OUT.h; a name without that extension gets the suffix appended.
std::string ReplaceExtension(const std::string& path, const std::string& from,
                             const std::string& to) {
  if (path.size() >= from.size() && path.compare(path.size() - from.size(), from.size(), from) == 0)
    return path.substr(0, path.size() - from.size()) + to;
  return path + to;
}

}  // namespace

int WriteEmitted(const targets::Emitted& emitted, const std::string& kind,
                 const std::string& input, const std::optional<std::string>& output,
                 const std::string& dump_dir, bool force) {
  if (!dump_dir.empty() && !emitted.dumps.empty()) {
    const std::filesystem::path dir = dump_dir;
    for (const auto& [relative, bytes] : emitted.dumps) {
      const std::filesystem::path path = dir / relative;
      std::filesystem::create_directories(path.parent_path());
      WriteOutputFile(path.string(), bytes, /*force=*/true, {input});
    }
  }
  if (!output && emitted.needs_output) {
    const std::string extension = emitted.beside.empty() ? "" : emitted.beside.front().from;
    throw UsageError("--emit " + kind + " needs -o OUT" + extension);
  }
  if (!emitted.error.empty()) throw hlo::Error(emitted.error);
  if (!output) {
    std::cout << emitted.to_stdout.value_or(emitted.main);
    std::cout.flush();
    if (!std::cout) return kExitFailure;
  } else {
    WriteOutputFile(*output, emitted.main, force, {input});
    for (const targets::Emitted::Beside& file : emitted.beside) {
      WriteOutputFile(ReplaceExtension(*output, file.from, file.to), file.bytes, force, {input});
    }
  }
  if (!emitted.summary.empty()) std::cerr << emitted.summary << "\n";
  return kExitOk;
}

}  // namespace cli
