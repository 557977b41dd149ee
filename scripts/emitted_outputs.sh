#!/usr/bin/env bash
# Writes everything the compiler emits for a set of modules into one folder, so that a change
# claimed to leave behaviour alone can be checked byte for byte:
#   scripts/emitted_outputs.sh RETARGET_BIN OUT_DIR [MODULE.hlo ...]
#   diff -r before/ after/          # empty: nothing emitted changed
# Per module (default: every module of ../shared/corpus/xla and examples/): the optimized HLO and
# compile stats of each target, the CPU backend's LLVM IR, the GPU backend's PTX, the systolic
# programs (.sasm; on a second preset also simulated: statistics and results), and the
# portability report (--estimate-only: JSON and HTML;
# measured latencies would differ run to run). A command that fails leaves its exit status and
# its stderr instead, so a changed refusal shows up too. Paths are written relative to the
# repository, so two checkouts in different folders compare equal, and times are masked.
# Progress on stderr.
set -uo pipefail

if [[ $# -lt 2 || "$1" == "--help" || "$1" == "-h" ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ( "$1" == "--help" || "$1" == "-h" ) ]] && exit 0 || exit 2
fi
retarget="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$2"
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$(cd "$root/../shared" && pwd)"
modules=("$@")
if ((${#modules[@]} == 0)); then
  modules=("$shared"/corpus/xla/*.hlo "$root"/examples/*.hlo)
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# Runs one command; on failure keeps its status and stderr as NAME.error.
emit() {
  local name="$1"
  shift
  local status=0
  "$@" >"$out/$name.stdout" 2>"$out/$name.stderr" || status=$?
  if ((status != 0)); then
    echo "exit status $status" >"$out/$name.error"
    # Heartbeat lines ("still running (5 s)") depend on the machine's speed: not kept.
    grep -v "still running" "$out/$name.stderr" >>"$out/$name.error"
  fi
  rm -f "$out/$name.stdout" "$out/$name.stderr"
}

count=0
for module in "${modules[@]}"; do
  count=$((count + 1))
  name="$(basename "$module" .hlo)"
  echo "emitted_outputs: [$count/${#modules[@]}] $name" >&2
  for target in interp cpu gpu systolic; do
    emit "$name.$target.hlo" "$retarget" compile "$module" --target "$target" --emit hlo \
      -o "$out/$name.$target.opt.hlo" --stats-json "$out/$name.$target.stats.json"
  done
  emit "$name.cpu.ll" "$retarget" compile "$module" --target cpu --emit llvm -o "$out/$name.cpu.ll"
  emit "$name.gpu.ptx" "$retarget" compile "$module" --target gpu --emit ptx -o "$out/$name.gpu.ptx"
  emit "$name.systolic.sasm" "$retarget" compile "$module" --target systolic --emit asm \
    -o "$out/$name.systolic.sasm"
  # A second machine, simulated: its program, statistics and results (modules up to 100 kB;
  # larger ones take minutes and up to 18 GB in the simulator; a run past 120 s is stopped and
  # recorded as such: jax.b380442861's million-trip loop runs its trips on the host).
  if (($(stat -c %s "$module") <= 100000)); then
    emit "$name.tpu-v4-mxu.run" timeout 120 "$retarget" run "$module" --target systolic --config tpu-v4-mxu \
      --inputs random:0 --emit-asm "$out/$name.tpu-v4-mxu.sasm" \
      --output "$out/$name.tpu-v4-mxu.out.npz" --stats-json "$out/$name.tpu-v4-mxu.stats.json" --force
  fi
  emit "$name.report" "$retarget" report "$module" --estimate-only \
    --json "$out/$name.report.json" --html "$out/$name.report.html"
done
# Checkout-independent text: the folders this run used become placeholders.
find "$out" -type f -print0 |
  xargs -0 sed -i -e "s#$out#<out>#g" -e "s#$root#<repo>#g" -e "s#$shared#<shared>#g"
# Run-dependent values: times become <t>.
find "$out" -name '*.json' -print0 | xargs -0 sed -i -E \
  -e 's/("([a-z_]*_ms|ms|[a-z_]*_seconds|seconds|wall_[a-z_]*)": )-?[0-9][0-9.e+-]*/\1<t>/g' \
  -e 's/("pass_times_ms": )\{[^}]*\}/\1<t>/g' -e 's/("times_ms": )\[[^]]*\]/\1<t>/g'
echo "emitted_outputs: $(find "$out" -type f | wc -l) files in $out" >&2
