#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (fuzz/): parser_fuzzer and proto_fuzzer.
#
#   scripts/fuzz.sh [SECONDS]      run each fuzzer for SECONDS (default 60), one after the other
#
# Environment:
#   FUZZ_BUILD_DIR   build dir (default build-fuzz; clang-19, ASan+UBSan+libFuzzer)
#   FUZZ_JOBS        ninja -j for the build (default: nproc)
#   FUZZ_MAX_LEN     largest input libFuzzer generates (default 65536; bigger seeds are truncated)
#   FUZZ_KEEP_GOING  1: keep fuzzing after a finding (libFuzzer -fork=1 -ignore_*), collecting
#                    every reproducer instead of stopping at the first
#   FUZZ_TARGETS     which fuzzers to run (default "parser proto")
#   RETARGET_SHARED_DIR  the shared/ folder with corpus/xla (default ../shared)
#
# Seeds: the corpus' HLO text files (read in place, never copied into the repo) for the parser;
# protos written by our own writer from the same files for the proto reader (generated into
# $FUZZ_BUILD_DIR/seeds/proto). New interesting inputs accumulate in $FUZZ_BUILD_DIR/corpus/*,
# reproducers of findings in $FUZZ_BUILD_DIR/findings/*, full logs in $FUZZ_BUILD_DIR/logs/.
# Exit status: 0 when no fuzzer reported a finding, 1 otherwise (a failed build is 2).
set -uo pipefail

# All work happens in main(), called on the last line: bash then parses the whole script before
# running it, so editing this file while a long fuzzing session runs cannot derail that session.
main() {
  seconds=${1:-60}
  root=$(cd "$(dirname "$0")/.." && pwd)
  build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
  shared=${RETARGET_SHARED_DIR:-$root/../shared}
  corpus_src=$shared/corpus/xla
  jobs=${FUZZ_JOBS:-$(nproc)}
  max_len=${FUZZ_MAX_LEN:-65536}
  targets=${FUZZ_TARGETS:-parser proto}

  if ! command -v clang++-19 >/dev/null; then
    echo "fuzz.sh: clang++-19 not found (scripts/install-deps.sh --fuzz installs it)" >&2
    exit 2
  fi
  if [[ ! -d $corpus_src ]]; then
    echo "fuzz.sh: seed corpus $corpus_src not found (set RETARGET_SHARED_DIR)" >&2
    exit 2
  fi

  # A separate build dir: the compiler and the sanitizer flags differ from the main build.
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRETARGET_FUZZ=ON -DRETARGET_TESTS=OFF -DRETARGET_BENCH=OFF \
    -DRETARGET_SHARED_DIR="$shared" >/dev/null || exit 2
  ninja -C "$build" -j "$jobs" parser_fuzzer proto_fuzzer proto_seed_writer || exit 2

  bin=$build/bin
  mkdir -p "$build"/{corpus/parser,corpus/proto,seeds/proto,findings/parser,findings/proto,logs}

  # Proto seeds from our writer (best effort: files the parser rejects are skipped).
  "$bin/proto_seed_writer" "$build/seeds/proto" "$corpus_src"/*.hlo \
    2>"$build/logs/proto_seeds.log"
  tail -n 1 "$build/logs/proto_seeds.log"

  common=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len"
          -print_final_stats=1)
  if [[ ${FUZZ_KEEP_GOING:-0} == 1 ]]; then
    common+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi

  status=0
  for target in $targets; do
    case $target in
      parser) args=("$build/corpus/parser" "$corpus_src" -dict="$root/fuzz/hlo.dict") ;;
      proto) args=("$build/corpus/proto" "$build/seeds/proto") ;;
      *) echo "fuzz.sh: unknown target $target" >&2; exit 2 ;;
    esac
    log=$build/logs/$target.log
    start_marker=$build/logs/.$target.start
    touch "$start_marker"
    echo "fuzz.sh: ${target}_fuzzer for ${seconds}s (log: $log)"
    # Findings in the UBSan runtime abort (the code is built with -fno-sanitize-recover=all);
    # print_stacktrace gives the stack in the log.
    UBSAN_OPTIONS=print_stacktrace=1 \
      "$bin/${target}_fuzzer" "${common[@]}" -artifact_prefix="$build/findings/$target/" \
      "${args[@]}" >"$log" 2>&1
    rc=$?
    # Final coverage line: "#N DONE cov: ..." in a single process, "#N: cov: ..." under -fork.
    grep -E "^#[0-9]+(:|[[:space:]]+DONE) +cov:" "$log" | tail -n 1 | sed 's/^/  /'
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" | sed 's/^/  /'
    new_findings=$(find "$build/findings/$target" -type f -newer "$start_marker")
    findings=$(printf '%s' "$new_findings" | grep -c . || true)
    if ((rc != 0 || findings > 0)); then
      status=1
      echo "fuzz.sh: ${target}_fuzzer FOUND PROBLEMS (exit $rc); reproducers:"
      printf '%s\n' "$new_findings" | sed 's/^/  /'
      grep -m 5 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|FINDING:" "$log" \
        | sed 's/^/  /'
      echo "  reproduce: $bin/${target}_fuzzer FILE"
    else
      echo "fuzz.sh: ${target}_fuzzer: no findings"
    fi
  done
  return $status
}

main "$@"
