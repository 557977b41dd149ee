// Shared set-up for the libFuzzer targets (fuzz/*_fuzzer.cc).
//
// Guarantees: every target gets ConfigureFuzzLimits() once (fuzz_initialize.cc), then runs every
// input through RunExpectingOnly<its reader's error types>() (hlo::Error for most readers,
// gpu::ArtifactError for the GPU artifact). That exception is the documented way to reject bad
// input and is swallowed; any other exception is a finding, so it is reported with its type and message and
// turned into an abort() that libFuzzer records as a crash (with the reproducer saved).
// Crashes, sanitizer reports, leaks, timeouts and out-of-memory are caught by libFuzzer itself.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>
#include <utility>

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

// Runs `body`; an exception of one of the `Allowed` types is the reader's documented rejection
// of bad input and is swallowed. Everything else aborts with a message libFuzzer records.
template <typename... Allowed, typename Body>
void RunExpectingOnly(const char* target, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    if ((... || (dynamic_cast<const Allowed*>(&e) != nullptr))) return;
    std::fprintf(stderr, "%s: FINDING: undocumented exception escaped: %s: %s\n", target,
                 typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "%s: FINDING: non-std exception escaped\n", target);
    std::abort();
  }
}

template <typename Body>
void RunExpectingOnlyHloErrors(const char* target, Body&& body) {
  RunExpectingOnly<hlo::Error>(target, std::forward<Body>(body));
}

// A broken round trip (write what was read, read it back, get something else) is a finding.
inline void Require(bool holds, const char* target, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "%s: FINDING: %s\n", target, what);
  std::abort();
}

}  // namespace fuzz
