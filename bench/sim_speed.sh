#!/usr/bin/env bash
# Speed of the accelerator simulator (docs/perf.md, "Accelerator simulator speed"): generates the
# workloads of bench/sim_workloads.py, runs `retarget sim` on each three times (median wall time)
# and once under valgrind's callgrind (instruction count: repeatable on a shared machine, where
# wall time is not), and prints a markdown table.
#   bench/sim_speed.sh [BUILD_DIR] [--no-callgrind]      (default BUILD_DIR: build)
# Needs python3 and, for the instruction counts, valgrind (scripts/install-deps.sh).
set -euo pipefail

build=build
callgrind=1
for arg in "$@"; do
  case "$arg" in
    --no-callgrind) callgrind=0 ;;
    *) build=$arg ;;
  esac
done
retarget="$build/bin/retarget"
[[ -x "$retarget" ]] || { echo "sim_speed: $retarget not built" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/sim_workloads.py" "$work" >"$work/list"
printf 'halt\n' >"$work/startup.sasm"  # process start, SystemC elaboration, no work
echo "startup tpu-v1" >>"$work/list"

json() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

echo "| workload | config | instructions | simulated cycles | wall s (median of 3) | simulated cycles / wall s | instructions / wall s | callgrind Ir (M) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
while read -r name config; do
  program="$work/$name.sasm"
  stats="$work/$name.json"
  walls=()
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$retarget" sim "$program" --config "$config" --stats-json "$stats" --force >/dev/null
    end=$(date +%s.%N)
    walls+=("$(python3 -c "print($end - $start)")")
  done
  wall=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n 2p)
  cycles=$(json "$stats" "['cycles']")
  instructions=$(json "$stats" "['instructions']")
  ir="-"
  if ((callgrind)); then
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$retarget" sim "$program" \
           --config "$config" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    ir=$(python3 -c "print(f'{$ir / 1e6:.1f}')")
  fi
  python3 -c "
w = $wall
print(f'| $name | $config | $instructions | $cycles | {w:.3f} | {$cycles / w:,.0f} | {$instructions / w:,.0f} | $ir |')"
done <"$work/list"
