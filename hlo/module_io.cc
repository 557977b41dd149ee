// LoadModule: read a file, detect text vs binary proto from its content, parse, verify.
//
// Guarantees: a missing or unreadable file is an hlo::Error naming the path; text is anything
// that starts (after whitespace and // or /* */ comments) with `HloModule`, everything else is
// read as a proto; the returned module has passed Verify unless verify=false; the source text is
// kept for error carets (empty for protos, which have no lines).
#include "hlo/module_io.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlo/proto_io.h"
#include "hlo/verifier.h"

namespace hlo {
namespace {

std::string ReadWholeFile(const std::string& path) {
  SourceLocation loc{std::make_shared<const std::string>(path), 0, 0};
  std::error_code ignored;
  // A directory opens fine as an ifstream on Linux and then fails to read; say so plainly.
  if (std::filesystem::is_directory(path, ignored)) {
    throw Error(loc, "cannot read '" + path + "': it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(loc, "cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw Error(loc, "cannot read '" + path + "'");
  return std::move(contents).str();
}

}  // namespace

bool LooksLikeProto(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    char c = bytes[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (bytes.substr(i, 2) == "//") {
      size_t end = bytes.find('\n', i);
      i = end == std::string_view::npos ? bytes.size() : end + 1;
    } else if (bytes.substr(i, 2) == "/*") {
      size_t end = bytes.find("*/", i + 2);
      if (end == std::string_view::npos) return true;  // unterminated comment: not valid text
      i = end + 2;
    } else {
      break;
    }
  }
  return bytes.substr(i, 9) != "HloModule";
}

LoadedModule LoadModule(const std::string& path, bool verify, const ParseOptions& options) {
  std::string contents = ReadWholeFile(path);
  LoadedModule loaded;
  if (LooksLikeProto(contents)) {
    loaded.module = ReadHloProto(contents, path);
  } else {
    loaded.module = ParseHloText(contents, path, options);
    loaded.source = std::move(contents);
  }
  if (verify) Verify(*loaded.module);
  return loaded;
}

}  // namespace hlo
