#!/usr/bin/env bash
# The "CPU runtime" numbers of docs/perf.md: GEMM and convolution vs OpenBLAS and Eigen, memcpy vs
# g++ loops, each repeated (default 7 times, repetitions randomly interleaved so that the load of
# a shared machine falls on all contenders alike), reported as median and best of wall time.
#
#   bench/cpu_runtime_numbers.sh BUILD_DIR [OUT_DIR]     (OUT_DIR default: BUILD_DIR/bench)
#
# Needs BUILD_DIR/bin/gemm_bench and bandwidth_bench (ninja gemm_bench bandwidth_bench).
# Environment: REPS (repetitions, default 7), MIN_TIME (seconds per repetition, default 0.2),
# FILTER (a --benchmark_filter regex for gemm_bench, default everything).
# OPENBLAS_CORETYPE defaults to SkylakeX: Debian's OpenBLAS 0.3.21 otherwise runs its SSE3
# "Prescott" kernels on this Xeon (see docs/perf.md); override it to measure the default.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: $0 BUILD_DIR [OUT_DIR]}
out=${2:-$build/bench}
mkdir -p "$out"
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
common=(--benchmark_repetitions="${REPS:-7}" --benchmark_min_time="${MIN_TIME:-0.2}"
        --benchmark_out_format=json
        --benchmark_enable_random_interleaving=true)
"$build/bin/gemm_bench" --benchmark_filter="${FILTER:-.}" "${common[@]}" \
  --benchmark_out="$out/gemm_bench.json" >&2
"$build/bin/bandwidth_bench" "${common[@]}" --benchmark_out="$out/bandwidth_bench.json" >&2
python3 "$root/bench/cpu_runtime_numbers.py" "$out/gemm_bench.json" "$out/bandwidth_bench.json"
