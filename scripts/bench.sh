#!/usr/bin/env bash
# Runs every benchmark and its baselines in one go and writes the JSON results.
#
#   scripts/bench.sh [BUILD_DIR]     (default: build; `make bench` calls it after `make build`)
#
# Writes BUILD_DIR/bench/:
#   parse_bench.json, interp_bench.json, compiler_bench.json   Google Benchmark JSON (bench/*.cc)
#   numpy_1thread.json, numpy_default.json  numpy/OpenBLAS matmul + copy baselines (same run,
#                                         same machine; the build's venv numpy)
#   summary.json + the Markdown table printed at the end (ratios and floors; docs/perf.md)
# Environment: BENCH_FILTER (a --benchmark_filter regex), BENCH_MIN_TIME (seconds per benchmark),
# BENCH_JOBS (build parallelism, default nproc).
# Exit status: 1 when a floor fails (gemma parse + verify >= 0.5 s, ResNet-50 batch 1 >= 30 s).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $build = /* ]] || build=$root/$build
out=$build/bench
mkdir -p "$out"

# Build the programs if they are missing or stale (a no-op after `make build`).
cmake --build "$build" -j "${BENCH_JOBS:-$(nproc)}" \
  --target parse_bench interp_bench compiler_bench >/dev/null

filter=${BENCH_FILTER:-.}
min_time=${BENCH_MIN_TIME:-0.5}
for program in parse_bench interp_bench compiler_bench; do
  echo "bench.sh: $program" >&2
  "$build/bin/$program" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
    --benchmark_out="$out/$program.json" --benchmark_out_format=json
done

# Baselines: one BLAS thread is the fair comparison for the single-threaded evaluator; the
# library default shows what the machine can do. They run under the build's own Python (its
# pinned numpy, scripts/setup-python.sh), never a python3 from PATH.
python="$build/venv/bin/python3"
"$root/scripts/setup-python.sh" "$build/venv"
OPENBLAS_NUM_THREADS=1 "$python" "$root/bench/numpy_baseline.py" "$out/numpy_1thread.json"
"$python" "$root/bench/numpy_baseline.py" "$out/numpy_default.json"
"$python" "$root/bench/summarize.py" "$out" | tee "$out/summary.md"
