#!/usr/bin/env bash
# `make demo`: a one-minute tour of the retarget CLI on the bundled examples/mlp.hlo (a 2-layer
# MLP with bias, relu and softmax). Verifies it, prints it as text and as a binary proto, runs it on
# the reference interpreter with deterministic random inputs, writes the results to out/demo/ and
# checks that the proto round trip computes the same numbers, then compiles it for cpu, gpu and
# systolic (the shared optimizer) and shows who owns what. Takes well under 5 seconds.
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

step "retarget compile $model --target T  (the shared optimizer, per target)"
for target in cpu gpu systolic; do
  "$retarget" compile "$model" --target "$target" -o "$out/mlp.$target.hlo" --force \
    --stats-json "$out/mlp.$target.stats.json"
  # Who runs what after this target's pipeline (compact: owner=count for non-zero owners).
  owners=$(grep -o '"instructions_by_owner": {[^}]*}' "$out/mlp.$target.stats.json" |
    sed -e 's/.*{//' -e 's/}//' -e 's/"//g' -e 's/: /=/g' | tr ',' '\n' |
    grep -v '=0$' | tr -d ' ' | paste -sd' ' -)
  kernels=$(grep -o '"kernel_count": [0-9]*' "$out/mlp.$target.stats.json" | grep -o '[0-9]*$')
  printf '  %-9s kernels=%-3s %s\n' "$target" "$kernels" "$owners"
  "$retarget" run "$out/mlp.$target.hlo" --target interp --inputs random:0 \
    --output "$out/mlp.$target.out.npz" >/dev/null
  "$retarget" compare "$out/mlp_out.npz" "$out/mlp.$target.out.npz" | sed 's/^/            /'
done

step "files"
ls -l "$out"
echo
echo "Load the results in numpy:  np.load('$out/mlp_out.npz')['out0']   (out0 = softmax, out1 = logits)"
