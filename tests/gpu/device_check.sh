#!/usr/bin/env bash
# The GPU device check: the ONE script run on a GPU machine (docs/gpu-runtime.md).
#
#   device_check.sh [--dry-run] [--build-dir B] [--repeat N] [--rtol R] [--atol A] DIR
#   device_check.sh --prepare --retarget BIN [--make-sample BIN] DIR [MODEL.hlo ...]
#
# DIR holds, per model NAME: NAME.rtgpu (compiled on the build machine), NAME.inputs.npz,
# NAME.expected.npz (the reference interpreter's outputs) and optionally NAME.hlo.pb (the module
# as HloModuleProto, for XLA's latency through JAX). The check
#   1. builds retarget-gpu-run from source with plain CMake (targets/gpu/runtime only: CUDA is all
#      it needs), 2. runs every artifact and compares its outputs with the expected ones,
#   3. times a direct cuBLASLt matmul of each matmul step's shape (the baseline),
#   4. runs the same HLO through JAX when jax is importable, 5. prints a summary table.
# --dry-run does 1 and checks the folder, the artifacts (--describe) and the comparison script,
# and runs the runtime once, accepting "no NVIDIA driver found" as the answer on GPU-less hosts.
# --prepare fills DIR on the build machine: the hand-built samples (--make-sample) and, for each
# MODEL.hlo, `retarget compile --target gpu`, random inputs and the interpreter's expected outputs.
# Exit status: 0 when every artifact that ran matched, 1 otherwise.
set -u -o pipefail

shopt -s nullglob
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# The Python with numpy: the build's own venv when ctest runs the dry run (RETARGET_PYTHON), the
# device image's python3 (which has numpy and jax) on the GPU machine.
PYTHON="${RETARGET_PYTHON:-python3}"
PY="$PYTHON $HERE/device_check.py"
DRY_RUN=0 PREPARE=0 REPEAT=20 RTOL=1e-4 ATOL=1e-5
BUILD="" RETARGET="" MAKE_SAMPLE="" DIR=""
MODELS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --prepare) PREPARE=1 ;;
    --build-dir) BUILD="$2"; shift ;;
    --repeat) REPEAT="$2"; shift ;;
    --rtol) RTOL="$2"; shift ;;
    --atol) ATOL="$2"; shift ;;
    --retarget) RETARGET="$2"; shift ;;
    --make-sample) MAKE_SAMPLE="$2"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "device_check: unknown option $1" >&2; exit 2 ;;
    *) if [ -z "$DIR" ]; then DIR="$1"; else MODELS+=("$1"); fi ;;
  esac
  shift
done
[ -n "$DIR" ] || { echo "device_check: no folder given (see --help)" >&2; exit 2; }
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
say() { echo "device_check: $*" >&2; }

# ---- prepare (build machine) -------------------------------------------------------------------
prepare() {
  # The runtime's one library beyond CUDA is header-only nlohmann-json; a GPU machine where
  # nothing can be installed builds with this machine's copy, carried in DIR.
  local header
  for header in /usr/include /usr/local/include; do
    if [ -f "$header/nlohmann/json.hpp" ]; then
      mkdir -p "$DIR/include" && cp -r "$header/nlohmann" "$DIR/include/" &&
        say "copied nlohmann-json's header into $DIR/include"
      break
    fi
  done
  if [ -n "$MAKE_SAMPLE" ]; then
    "$MAKE_SAMPLE" "$DIR" >/dev/null && "$MAKE_SAMPLE" "$DIR" 1024 1024 1024 >/dev/null || return 1
    say "wrote the hand-built samples"
  fi
  [ ${#MODELS[@]} -eq 0 ] || [ -n "$RETARGET" ] || { say "--prepare with models needs --retarget BIN"; return 1; }
  for hlo in "${MODELS[@]}"; do
    local name; name="$(basename "${hlo%.*}")"
    if ! "$RETARGET" compile "$hlo" --target gpu -o "$DIR/$name.rtgpu" >/dev/null 2>"$DIR/$name.compile.log"; then
      say "$name: compile --target gpu failed (see $DIR/$name.compile.log)"; continue
    fi
    "$BIN_RUN" "$DIR/$name.rtgpu" --describe >"$DIR/$name.describe.txt" &&
      $PY inputs "$DIR/$name.describe.txt" "$DIR/$name.inputs.npz" &&
      "$RETARGET" run "$hlo" --target interp --inputs "$DIR/$name.inputs.npz" --output "$DIR/$name.expected.npz" --force >/dev/null &&
      cp "$hlo" "$DIR/$name.hlo" && say "$name: prepared" || say "$name: preparing failed"
  done
  # jaxlib reads modules as HloModuleProto only.
  [ -n "$RETARGET" ] || return 0
  for hlo in "$DIR"/*.hlo; do
    [ -f "$hlo.pb" ] || "$RETARGET" print "$hlo" --format proto -o "$hlo.pb" || say "$(basename "$hlo"): no proto"
  done
}

# ---- 1. build the runtime from source, standalone ----------------------------------------------
build_runtime() {
  # Outside DIR, so that a folder carried to another machine never brings a foreign CMake cache.
  BUILD="${BUILD:-$ROOT/build-gpu-runtime}"
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  say "building retarget-gpu-run from $ROOT/targets/gpu/runtime into $BUILD"
  local t0=$SECONDS
  mkdir -p "$BUILD"
  # nlohmann-json's header: the copy --prepare put in DIR when there is one (so the dry run here
  # builds exactly as the GPU machine will), else the machine's own.
  # Both settings are set or cleared on every run: the CMake cache of BUILD keeps them otherwise.
  local json=(-DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=OFF -URTGPU_JSON_INCLUDE_DIR)
  [ -f "$DIR/include/nlohmann/json.hpp" ] &&
    json=(-DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DRTGPU_JSON_INCLUDE_DIR="$DIR/include")
  cmake -S "$ROOT/targets/gpu/runtime" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    "${json[@]}" >"$BUILD/build.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" >>"$BUILD/build.log" 2>&1 ||
    { say "runtime build FAILED:"; tail -30 "$BUILD/build.log" >&2; exit 1; }
  say "runtime built in $((SECONDS - t0)) s"
  BIN_RUN="$BUILD/retarget-gpu-run"
  BIN_BASELINE="$BUILD/retarget-gpu-cublaslt-baseline"
}

build_runtime
if [ "$PREPARE" = 1 ]; then prepare; exit $?; fi

ARTIFACTS=("$DIR"/*.rtgpu)
[ ${#ARTIFACTS[@]} -gt 0 ] || { say "no .rtgpu files in $DIR"; exit 1; }
ROWS="$DIR/.summary.tsv"
printf 'artifact\tresult\truntime ms (median)\tsteps ms (kind=median)\tcuBLASLt baseline ms\tXLA via JAX ms\n' >"$ROWS"
FAILED=0
for artifact in "${ARTIFACTS[@]}"; do
  name="$(basename "${artifact%.rtgpu}")"
  inputs="$DIR/$name.inputs.npz" expected="$DIR/$name.expected.npz" proto="$DIR/$name.hlo.pb"
  if ! "$BIN_RUN" "$artifact" --describe >"$DIR/$name.describe.txt" 2>&1; then
    say "$name: invalid artifact: $(cat "$DIR/$name.describe.txt")"; FAILED=1
    printf '%s\tINVALID\t-\t-\t-\t-\n' "$name" >>"$ROWS"; continue
  fi
  input_flag=(--inputs random:1)
  [ -f "$inputs" ] && input_flag=(--inputs "$inputs")
  if [ "$DRY_RUN" = 1 ]; then
    [ -f "$inputs" ] || say "$name: no $name.inputs.npz (random inputs, no comparison)"
    [ -f "$expected" ] && { $PY compare "$expected" "$expected" >/dev/null || { say "$name: comparison self-check failed"; FAILED=1; }; }
    out="$("$BIN_RUN" "$artifact" "${input_flag[@]}" --repeat 1 --warmup 0 2>&1)"; rc=$?
    if [ $rc = 0 ]; then state="ran (a GPU is present)"
    elif [ $rc = 1 ] && grep -q "no NVIDIA driver found" <<<"$out"; then state="no driver (expected here)"
    else say "$name: unexpected runtime answer (exit $rc): $out"; state="UNEXPECTED"; FAILED=1; fi
    mm="$($PY matmuls "$artifact" | wc -l) matmul(s)"
    printf '%s\tdry-run: %s\t-\t%s\t-\t%s\n' "$name" "$state" "$mm" "$([ -f "$proto" ] && echo "proto present" || echo "no proto")" >>"$ROWS"
    continue
  fi
  # ---- 2. run and compare ----
  if ! "$BIN_RUN" "$artifact" "${input_flag[@]}" --repeat "$REPEAT" --output "$DIR/$name.out.npz" \
       --stats-json "$DIR/$name.stats.json" >"$DIR/$name.run.txt" 2>&1; then
    say "$name: run FAILED: $(tail -3 "$DIR/$name.run.txt")"; FAILED=1
    printf '%s\tRUN FAILED\t-\t-\t-\t-\n' "$name" >>"$ROWS"; continue
  fi
  result="not compared"
  if [ -f "$expected" ]; then
    result="$($PY compare "$expected" "$DIR/$name.out.npz" --rtol "$RTOL" --atol "$ATOL")" || FAILED=1
  fi
  median="$("$PYTHON" -c "import json,sys; print('%.4f' % json.load(open(sys.argv[1]))['total_median_ms'])" "$DIR/$name.stats.json")"
  steps="$("$PYTHON" -c "import json,sys; print(' '.join('%s=%.4f' % (s['kind'].replace('cublaslt_',''), s['median_ms']) for s in json.load(open(sys.argv[1]))['steps']))" "$DIR/$name.stats.json")"
  # ---- 3. cuBLASLt baseline for each matmul shape ----
  baseline=""
  while read -r m n k batch dtype tf32; do
    [ -n "$m" ] || continue
    extra=(); [ "$tf32" = 1 ] && extra=(--tf32)
    b="$("$BIN_BASELINE" "$m" "$n" "$k" --batch "$batch" --dtype "$dtype" "${extra[@]}" --repeat "$REPEAT" 2>&1)"
    baseline="${baseline:+$baseline }$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$b")"
  done < <($PY matmuls "$artifact")
  # ---- 4. XLA through JAX ----
  jax="no proto"
  [ -f "$proto" ] && [ -f "$inputs" ] && jax="$($PY jax "$proto" "$inputs" "$REPEAT" "$expected" 2>&1 | tail -1 | sed 's/^jax //')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$result" "$median" "$steps" "${baseline:--}" "$jax" >>"$ROWS"
done
# ---- 5. summary ----
echo
$PY table "$ROWS"
exit $FAILED
