#include "hlo/diagnostic.h"

#include <unistd.h>

#include <algorithm>

namespace hlo {

std::string FormatError(const Error& error, std::string_view fallback_file,
                        std::string_view source) {
  const SourceLocation& loc = error.location();
  std::string out;
  if (loc.file && !loc.file->empty()) {
    out += *loc.file;
  } else if (!fallback_file.empty()) {
    out += fallback_file;
  } else {
    out += "<input>";
  }
  out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": error: ";
  out += error.message();
  out += "\n";
  if (loc.line == 0 || source.empty()) return out;
  // Find the offending line (1-based).
  size_t begin = 0;
  for (uint32_t line = 1; line < loc.line; ++line) {
    size_t nl = source.find('\n', begin);
    if (nl == std::string_view::npos) return out;
    begin = nl + 1;
  }
  size_t end = source.find('\n', begin);
  if (end == std::string_view::npos) end = source.size();
  std::string_view text = source.substr(begin, std::min<size_t>(end - begin, 400));
  out += std::string(text) + "\n";
  size_t col = loc.column == 0 ? 0 : loc.column - 1;
  std::string pad;
  for (size_t i = 0; i < col && i < text.size(); ++i) pad += text[i] == '\t' ? '\t' : ' ';
  out += pad + "^\n";
  return out;
}

int64_t DefaultLiveLiteralBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{1} << 40;
  return static_cast<int64_t>(static_cast<double>(pages) * static_cast<double>(page_size) * 0.9);
}

Limits& GlobalLimits() {
  static Limits limits;
  return limits;
}

}  // namespace hlo
