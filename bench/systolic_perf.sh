#!/usr/bin/env bash
# Systolic target numbers for docs/perf.md ("Systolic target: simulated latency and
# utilization"): runs three corpus models on N x N arrays (tpu-v4-mxu with the f32 matrix mode
# added, so the f32/bf16 models stay on the accelerator) and the default tpu-v1 machine, prints
# one markdown row per run from the --stats-json counters, and times the whole
# `retarget run` of resnet50 three times (/usr/bin/time -f %e; the median goes in the doc).
# f32 models are compared with --rtol 1e-4: the issue's f32 bound is "exact up to
# reassociation in accumulation order", and resnet50's long f32 sums, tiled in a different
# order than the interpreter's, differ by more than the f32 default (rtol 1e-5). Other element
# types keep compare.h's defaults.
#
# Usage: bench/systolic_perf.sh RETARGET OUT_DIR [CORPUS_DIR]
#   RETARGET    the retarget binary (copy it out of build/ first: it is rebuilt often)
#   OUT_DIR     where the stats JSON files go
#   CORPUS_DIR  default /work/shared/corpus/xla
set -euo pipefail
retarget=$1
out=$2
corpus=${3:-/work/shared/corpus/xla}
mkdir -p "$out"

row() {  # row MODEL LABEL STATS_JSON
  python3 - "$@" <<'EOF'
import json, sys
model, label, path = sys.argv[1:4]
stats = json.load(open(path))
c = stats["counters"]
compare = stats.get("compare", {}).get("summary", "-")
print(f"| {model} | {label} | {c['cycles']:,} | {c['seconds'] * 1e6:.0f} "
      f"| {c['mac_utilization'] * 100:.2f} % | {c['achieved_tops']:.3f} "
      f"| {c['host_fallback_share'] * 100:.1f} % | {stats['compile_ms']:.1f} | {compare} |")
EOF
}

echo "| model | machine | cycles | latency µs | MAC util. | TOPS | host share | compile ms | compare |"
echo "|---|---|---|---|---|---|---|---|---|"
for model in resnet50_keras_jax_f32 mha_block_1x12x128x64_bf16 layer_norm_1x4096x768_bf16; do
  for n in 32 64 128; do
    compare=()
    if [ "$n" = 128 ]; then
      compare=(--compare interp)
      case "$model" in *_f32) compare+=(--rtol 1e-4) ;; esac
    fi
    stats="$out/${model}_${n}.json"
    "$retarget" run "$corpus/$model.hlo" --target systolic --config tpu-v4-mxu \
      --set array.dtypes=int8,bf16,f32 --set array.rows=$n --set array.cols=$n \
      --inputs random:0 --stats-json "$stats" --force "${compare[@]}" >/dev/null
    row "$model" "tpu-v4-mxu ${n}x${n}" "$stats"
  done
  stats="$out/${model}_tpuv1.json"
  "$retarget" run "$corpus/$model.hlo" --target systolic --inputs random:0 \
    --stats-json "$stats" --force >/dev/null
  row "$model" "default (tpu-v1 256x256)" "$stats"
done

echo
echo "wall-clock of 'retarget run resnet50_keras_jax_f32.hlo --target systolic' (s):"
for i in 1 2 3; do
  /usr/bin/time -f %e "$retarget" run "$corpus/resnet50_keras_jax_f32.hlo" --target systolic \
    --inputs random:0 2>&1 >/dev/null | tail -1
done
