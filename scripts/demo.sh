#!/usr/bin/env bash
# `make demo`: a one-minute tour of the retarget CLI on the bundled examples/mlp.hlo (a 2-layer
# MLP with bias, relu and softmax). Verifies it, prints it as text and as a binary proto, runs it on
# the reference interpreter with deterministic random inputs, writes the results to out/demo/ and
# checks that the proto round trip computes the same numbers. Takes well under 5 seconds.
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
  --compare interp --repeat 5 --stats-json "$out/mlp_stats.json"

step "the proto gives the same results"
"$retarget" run "$out/mlp.pb" --target interp --inputs random:0 --output "$out/mlp_pb_out.npz" >/dev/null
"$retarget" compare "$out/mlp_out.npz" "$out/mlp_pb_out.npz" --rtol 0 --atol 0

step "files"
ls -l "$out"
echo
echo "Load the results in numpy:  np.load('$out/mlp_out.npz')['out0']   (out0 = softmax, out1 = logits)"
