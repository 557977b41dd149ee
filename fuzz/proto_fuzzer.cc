// libFuzzer target: arbitrary bytes -> hlo::ReadHloProto -> (if it reads) hlo::Verify.
//
// Finds crashes, sanitizer reports, leaks, hangs, unbounded allocation and exceptions other than
// hlo::Error in the binary proto reader (xla.HloProto / HloModuleProto) and the verifier.
// Seeds: protos that our own writer produced from the corpus text files (scripts/fuzz.sh
// generates them with proto_seed_writer into build-fuzz/; they are not committed).
//
// libprotobuf is Debian's build (g++, libstdc++, not instrumented). It links fine with clang++
// on libstdc++; its own code is not sanitizer-checked, only ours and the generated hlo.pb.cc are.
// No false positives from that mix were seen (ASan ODR checks, LeakSanitizer on protobuf's
// global descriptor pool, UBSan vptr checks on protobuf classes all stay quiet over millions of
// runs), so no suppressions are needed; if one appears, add a suppression file to
// scripts/fuzz.sh (LSAN_OPTIONS=suppressions=...) rather than weakening the flags.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "hlo/proto_io.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::RunExpectingOnlyHloErrors("proto_fuzzer", [&] {
    std::unique_ptr<hlo::Module> module = hlo::ReadHloProto(bytes, "fuzz.pb");
    hlo::Verify(*module);
  });
  return 0;
}
