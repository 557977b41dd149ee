// The one LLVMFuzzerInitialize of every fuzz target (linked into each by retarget_fuzzer in
// fuzz/CMakeLists.txt): the fuzzing limits of fuzz_support.h, before the first input.
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::ConfigureFuzzLimits();
  return 0;
}
