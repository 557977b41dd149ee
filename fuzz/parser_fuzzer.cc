// libFuzzer target: arbitrary bytes -> hlo::ParseHloText -> (if it parses) hlo::Verify.
//
// Finds crashes, sanitizer reports (ASan/UBSan), leaks, hangs (-timeout), unbounded allocation
// (-rss_limit_mb / -malloc_limit_mb) and exceptions other than hlo::Error in the text parser and
// the verifier. Seeds: the HLO text files of ../shared/corpus/xla; dictionary: fuzz/hlo.dict.
// Run through scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hlo::ParseOptions options;
  options.warn = [](const std::string&) {};  // warnings are not findings; keep the log quiet
  fuzz::RunExpectingOnlyHloErrors("parser_fuzzer", [&] {
    std::unique_ptr<hlo::Module> module = hlo::ParseHloText(text, "fuzz.hlo", options);
    hlo::Verify(*module);
  });
  return 0;
}
