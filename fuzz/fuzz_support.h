// Shared set-up for the libFuzzer targets (parser_fuzzer, proto_fuzzer).
//
// Guarantees: each target calls ConfigureFuzzLimits() once, then runs every input through
// RunExpectingOnlyHloErrors(). An hlo::Error is the documented way to reject bad input and is
// swallowed; any other exception is a finding, so it is reported with its type and message and
// turned into an abort() that libFuzzer records as a crash (with the reproducer saved).
// Crashes, sanitizer reports, leaks, timeouts and out-of-memory are caught by libFuzzer itself.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "hlo/diagnostic.h"

namespace fuzz {

// The default GlobalLimits() allow 16 GiB per array, which is right for real models but lets a
// 40-byte input such as `c = f32[1000000000] constant({...})` legally allocate gigabytes, and
// libFuzzer's -rss_limit_mb would report that as a (false) out-of-memory finding. The fuzzers
// therefore lower the per-array limits: anything above them must be rejected with an hlo::Error,
// and an out-of-memory report now means an allocation that bypassed the limits (or, with a
// 2 GiB RSS limit, more than 32 maximal arrays in one input; check the shapes before filing).
// The element limit stays high enough for most corpus seeds (ResNet-50, MobileNet, DLRM, the
// bf16 micro-benchmarks) to verify; Gemma's 262144x1152 embedding is rejected, which is fine.
inline void ConfigureFuzzLimits() {
  hlo::Limits& limits = hlo::GlobalLimits();
  limits.max_elements_per_array = int64_t{1} << 24;     // 16 Mi elements
  limits.max_bytes_per_allocation = int64_t{64} << 20;  // 64 MiB
  limits.max_rank = 16;
  limits.max_while_iterations = int64_t{1} << 16;       // no evaluation today; bound it anyway
}

// Runs `body`; hlo::Error is the expected rejection, everything else aborts with a message.
template <typename Body>
void RunExpectingOnlyHloErrors(const char* target, Body&& body) {
  try {
    body();
  } catch (const hlo::Error&) {
    // Bad input, reported the documented way.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: FINDING: exception other than hlo::Error escaped: %s: %s\n",
                 target, typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "%s: FINDING: non-std exception escaped\n", target);
    std::abort();
  }
}

}  // namespace fuzz
