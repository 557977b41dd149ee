// libFuzzer target: arbitrary bytes -> io::DecodeNpz (zip container, STORED and DEFLATE entries,
// ZIP64) or, for inputs starting with the .npy magic, io::DecodeNpy (header dictionary, dtypes,
// byte order, Fortran order). These read every `--inputs FILE.npz` a user passes to `retarget run`.
//
// Finds crashes, sanitizer reports, hangs, decompression bombs and allocations beyond the limits
// (-rss_limit_mb), and exceptions other than hlo::Error. Every array read is encoded again and
// must decode to the same bytes. Seeds: tests/data/npz and tests/data/models (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "tools/io/npz.h"

namespace {

void CheckReencodes(const hlo::Literal& literal) {
  const std::string encoded = io::EncodeNpy(literal);
  fuzz::Require(io::EncodeNpy(io::DecodeNpy(encoded, "reencoded.npy")) == encoded, "npz_fuzzer",
                "an array written as .npy does not read back to the same bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::RunExpectingOnlyHloErrors("npz_fuzzer", [&] {
    if (bytes.substr(0, 6) == "\x93NUMPY") {
      CheckReencodes(io::DecodeNpy(bytes, "fuzz.npy"));
      return;
    }
    for (const io::NpyArray& array : io::DecodeNpz(bytes, "fuzz.npz")) CheckReencodes(array.literal);
  });
  return 0;
}
