#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (fuzz/), one per reader of user files: parser (HLO text),
# proto (binary HLO proto), sasm (assembler), isa_binary (.bin decoder), arch_config
# (accelerator config), npz (.npz/.npy inputs), rtgpu (GPU artifact), scalesim (SCALE-Sim
# config and topology).
#
#   scripts/fuzz.sh [SECONDS]      run each fuzzer for SECONDS (default 60), one after the other
#
# Environment:
#   FUZZ_BUILD_DIR   build dir (default build-fuzz; clang-19, ASan+UBSan+libFuzzer)
#   FUZZ_JOBS        ninja -j for the build (default: nproc)
#   FUZZ_MAX_LEN     largest input libFuzzer generates (default 65536; bigger seeds are truncated)
#   FUZZ_KEEP_GOING  1: keep fuzzing after a finding (libFuzzer -fork=1 -ignore_*), collecting
#                    every reproducer instead of stopping at the first
#   FUZZ_TARGETS     which fuzzers to run (default: all eight, in the order above)
#   FUZZ_MAIN_BUILD  the main build dir (default build); when its bin/retarget exists, the
#                    systolic and GPU backends' output for a few run-corpus models joins the
#                    sasm and rtgpu seeds
#   RETARGET_SHARED_DIR  the shared/ folder with corpus/xla (default ../shared)
#
# Seeds: the corpus' HLO text files (read in place, never copied into the repo) for the parser;
# protos written by our own writer from the same files for the proto reader; examples/systolic
# and backend output for the assembler, those programs assembled for the decoder, the presets for
# the config parser, tests/data/npz and tests/data/models for the npz reader, the sample artifact
# for the GPU artifact reader, ../shared/anchors/scalesim for the SCALE-Sim readers. Generated
# seeds go to $FUZZ_BUILD_DIR/seeds/*. New interesting inputs accumulate in $FUZZ_BUILD_DIR/corpus/*,
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
  targets=${FUZZ_TARGETS:-parser proto sasm isa_binary arch_config npz rtgpu scalesim}
  main_build=${FUZZ_MAIN_BUILD:-$root/build}

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
  fuzzers=()
  for target in $targets; do fuzzers+=("${target}_fuzzer"); done
  ninja -C "$build" -j "$jobs" "${fuzzers[@]}" proto_seed_writer reader_seed_writer || exit 2

  bin=$build/bin
  mkdir -p "$build"/{seeds/proto,seeds/sasm,seeds/rtgpu_models,logs}
  for target in $targets; do mkdir -p "$build/corpus/$target" "$build/findings/$target"; done

  # Backend output as seeds for the readers of programs and artifacts, when the main build is
  # there (best effort; skipped when no such reader is fuzzed).
  if [[ ! " $targets " =~ \ (sasm|isa_binary|rtgpu)\  ]]; then
    :
  elif [[ -x $main_build/bin/retarget ]]; then
    for model in "$root"/tests/run/control/*.hlo "$root"/tests/run/contraction/*.hlo; do
      stem=$(basename "$model" .hlo)
      "$main_build/bin/retarget" compile "$model" --target systolic --emit asm \
        -o "$build/seeds/sasm/$stem.sasm" --force >/dev/null 2>&1 || true
      "$main_build/bin/retarget" compile "$model" --target gpu \
        -o "$build/seeds/rtgpu_models/$stem.rtgpu" --force >/dev/null 2>&1 || true
    done
  else
    echo "fuzz.sh: no $main_build/bin/retarget; sasm and rtgpu seeds without backend output"
  fi
  "$bin/reader_seed_writer" "$build/seeds" "$root"/examples/systolic/*.sasm \
    "$build"/seeds/sasm/*.sasm 2>"$build/logs/reader_seeds.log"
  tail -n 1 "$build/logs/reader_seeds.log"

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
      sasm) args=("$build/corpus/sasm" "$root/examples/systolic" "$build/seeds/sasm") ;;
      isa_binary) args=("$build/corpus/isa_binary" "$build/seeds/bin") ;;
      arch_config) args=("$build/corpus/arch_config" "$build/seeds/arch") ;;
      npz) args=("$build/corpus/npz" "$root/tests/data/npz" "$root/tests/data/models") ;;
      rtgpu) args=("$build/corpus/rtgpu" "$build/seeds/rtgpu")
             [[ -d $build/seeds/rtgpu_models ]] && args+=("$build/seeds/rtgpu_models") ;;
      scalesim) args=("$build/corpus/scalesim" "$shared/anchors/scalesim/configs"
                      "$shared/anchors/scalesim/topologies") ;;
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
