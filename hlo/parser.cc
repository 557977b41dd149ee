#include "hlo/parser.h"

namespace hlo {
// Placeholder until the parser lands.
std::unique_ptr<Module> ParseHloText(std::string_view, std::string_view filename,
                                     const ParseOptions&) {
  throw Error(std::string(filename) + ": the text parser is not built yet");
}
}  // namespace hlo
