#!/usr/bin/env bash
# `make demo`: a one-minute tour of the retarget CLI on the bundled examples/mlp.hlo (a 2-layer
# MLP with bias, relu and softmax). Verifies it, runs it on the reference interpreter with
# deterministic random inputs, then on the LLVM CPU backend and on the simulated systolic
# accelerator, each compared with the interpreter; runs a hand-written accelerator program on the
# simulator; and ends with the portability report over cpu, gpu and systolic, written as a table,
# JSON and one self-contained HTML page (out/demo/report.html). No GPU needed: the gpu column is
# the cost model's estimate, labelled so.
#   scripts/demo.sh [BUILD_DIR]     (default: build)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-build}"
[[ "$build_dir" = /* ]] || build_dir="$root/$build_dir"
retarget="$build_dir/bin/retarget"
model="examples/mlp.hlo"
out="out/demo"

cd "$root"
if [[ ! -x "$retarget" ]]; then
  echo "demo: $retarget not found; build first (make build)" >&2
  exit 1
fi
mkdir -p "$out"
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }

step "retarget verify $model"
"$retarget" verify "$model"

step "retarget print $model  (canonical text; first lines)"
"$retarget" print "$model" -o "$out/mlp.canonical.hlo" --force
head -n 8 "$out/mlp.canonical.hlo"
echo "  ... ($(wc -l <"$out/mlp.canonical.hlo") lines in $out/mlp.canonical.hlo)"

step "retarget print $model --format proto"
"$retarget" print "$model" --format proto -o "$out/mlp.pb" --force
"$retarget" verify "$out/mlp.pb"

step "retarget run $model --target interp --inputs random:0 --compare interp --repeat 5"
"$retarget" run "$model" --target interp --inputs random:0 --output "$out/mlp_out.npz" \
  --compare interp --repeat 5 --stats-json "$out/mlp_stats.json" --force

step "the proto gives the same results"
"$retarget" run "$out/mlp.pb" --target interp --inputs random:0 --output "$out/mlp_pb_out.npz" \
  --force >/dev/null
"$retarget" compare "$out/mlp_out.npz" "$out/mlp_pb_out.npz" --rtol 0 --atol 0

step "retarget run $model --target cpu --compare interp --repeat 20  (LLVM, JIT for this CPU)"
"$retarget" run "$model" --target cpu --inputs random:0 --compare interp --repeat 20 \
  --stats-json "$out/mlp_cpu_stats.json" --force

step "retarget run $model --target systolic --compare interp  (SystemC accelerator simulator)"
"$retarget" run "$model" --target systolic --inputs random:0 --compare interp \
  --stats-json "$out/mlp_systolic_stats.json" --emit-asm "$out/mlp.sasm" --force
echo "  accelerator program: $out/mlp.sasm ($(grep -cv '^ *#' "$out/mlp.sasm") lines)"

step "retarget sim examples/systolic/matmul_tile.sasm --trace  (a hand-written accelerator program)"
"$retarget" sim examples/systolic/matmul_tile.sasm --trace "$out/matmul_tile.trace.json" \
  --stats-json "$out/matmul_tile.stats.json" --force
echo "  open $out/matmul_tile.trace.json in https://ui.perfetto.dev to see the units' timeline"

step "retarget report $model --html  (the portability report: owners, carried across, cost)"
"$retarget" report "$model" --json "$out/report.json" --html "$out/report.html" --force

step "files"
ls -l "$out"
echo
echo "Open $out/report.html in a browser; load results in numpy: np.load('$out/mlp_out.npz')['out0']"
