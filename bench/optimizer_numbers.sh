#!/usr/bin/env bash
# The optimizer's numbers for docs/perf.md (issue 3, "Numbers"): fusion coverage and kernel
# counts per target next to XLA CPU's own for the same modules, and the cpu pipeline's per-pass
# times on gemma3_1b_flax_call.
#
#   bench/optimizer_numbers.sh BUILD_DIR [OUT_DIR]       # e.g. bench/optimizer_numbers.sh build
#
# Runs `BUILD_DIR/bin/retarget compile FILE --target T --stats-json ... --time-passes` for
# resnet50 / mha_block / layer_norm / dlrm test step x {cpu, gpu, systolic}, and gemma3 on cpu
# (GEMMA_RUNS times, default 3; the run with the median pipeline time is shown). Then
# bench/xla_kernel_counts.py compiles the five modules with XLA CPU through jaxlib and counts
# its after-optimizations dump with the same definitions (docs/ownership.md); gemma3 gets one
# table row, cpu only. Prints markdown
# tables on stdout; every JSON, optimized module and log stays in OUT_DIR
# (default out/optimizer_numbers, ignored by git). Without jax the XLA columns read "n/a".
#
# As a check of the Python counter, it also counts our own optimized modules and compares with
# --stats-json (they must agree wherever every instruction runs on the device: a host-fallback
# op is no kernel for us, while the counter, written for XLA, counts every op as one).
# Exit status: 0, or 1 when a compile failed or the two counts disagree.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [OUT_DIR]" >&2
  exit 2
fi
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$1" && pwd)
OUT=${2:-$REPO/out/optimizer_numbers}
RETARGET=$BUILD/bin/retarget
CORPUS=${RETARGET_CORPUS:-$REPO/../shared/corpus/xla}
MODULES="resnet50_keras_jax_f32 mha_block_1x12x128x64_bf16 layer_norm_1x4096x768_bf16
         dlrm_keras_jax_f32_test_step"
TARGETS="cpu gpu systolic"
GEMMA=gemma3_1b_flax_call
[[ -x $RETARGET ]] || { echo "no $RETARGET: build the retarget target first" >&2; exit 2; }
mkdir -p "$OUT"
HEADER="Run of $(date -u '+%Y-%m-%d %H:%M UTC'), $RETARGET (built $(date -u -r "$RETARGET" \
    '+%H:%M UTC')), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start."

# compile MODULE TARGET TAG: one pipeline run; stats in OUT/TAG.json, optimized module in
# OUT/TAG.hlo, --time-passes table in OUT/TAG.passes.txt, and "wall user sys" seconds of the
# whole command (parse + pipeline + analysis + write) in OUT/TAG.time. Pass times are wall
# clock: on a loaded machine compare them with the command's CPU time (user + sys).
compile() {
  local TIMEFORMAT='%R %U %S'
  if ! { time "$RETARGET" compile "$CORPUS/$1.hlo" --target "$2" --force --time-passes \
          --stats-json "$OUT/$3.json" -o "$OUT/$3.hlo" 2>"$OUT/$3.passes.txt"; } 2>"$OUT/$3.time"
  then
    echo "retarget compile $1 --target $2 failed:" >&2
    tail -5 "$OUT/$3.passes.txt" >&2
    exit 1
  fi
}

for module in $MODULES; do
  for target in $TARGETS; do
    compile "$module" "$target" "$module.$target"
  done
done
for ((run = 1; run <= ${GEMMA_RUNS:-3}; ++run)); do
  compile "$GEMMA" cpu "$GEMMA.cpu.run$run"
done

# XLA's side. Exit 2 of the counter means "platform not available" (no GPU here).
xla_status() {
  local platform=$1 rc=0
  # shellcheck disable=SC2086  # MODULES is a word list
  python3 "$REPO/bench/xla_kernel_counts.py" --platform "$platform" --retarget "$RETARGET" \
      --json "$OUT/xla_$platform.json" $MODULES "$GEMMA" >"$OUT/xla_$platform.md" \
      2>"$OUT/xla_$platform.log" || rc=$?
  echo "$rc"
}
XLA_CPU_RC=$(xla_status cpu)
XLA_GPU_RC=$(xla_status gpu)

echo "$HEADER"
echo
# shellcheck disable=SC2086  # MODULES is a word list
REPO_BENCH=$REPO/bench python3 - "$OUT" "$XLA_CPU_RC" "$XLA_GPU_RC" "$GEMMA" "${GEMMA_RUNS:-3}" \
    $MODULES <<'PYTHON'
import json, os, sys

out, xla_cpu_rc, xla_gpu_rc, gemma, gemma_runs = sys.argv[1:6]
modules = sys.argv[6:]
targets = ["cpu", "gpu", "systolic"]
sys.path.insert(0, os.environ["REPO_BENCH"])
import xla_kernel_counts as counter


def load(tag):
    with open(os.path.join(out, tag + ".json")) as f:
        return json.load(f)


def owners(stats):
    """Non-trivial instructions by owner, libraries named: 'generated 965, Eigen 438'."""
    parts = []
    for owner, count in stats["instructions_by_owner"].items():
        if count == 0:
            continue
        if owner == "library":
            parts += ["%s %d" % kv for kv in sorted(stats["library_instructions"].items())]
        else:
            parts.append("%s %d" % (owner, count))
    return ", ".join(parts)


xla = {}
if xla_cpu_rc in ("0", "1") and os.path.exists(os.path.join(out, "xla_cpu.json")):
    with open(os.path.join(out, "xla_cpu.json")) as f:
        xla = {r["module"]: r for r in json.load(f)}

print("| module | target | our kernels | our coverage | XLA CPU kernels | XLA coverage |"
      " of our kernels: lone reshapes | our non-trivial instructions by owner |")
print("|---|---|---|---|---|---|---|---|")
# (module, target, file tag): every target for the four modules, and gemma3's first cpu run.
rows = [(module, target, "%s.%s" % (module, target)) for module in modules for target in targets]
rows.append((gemma, "cpu", "%s.cpu.run1" % gemma))
disagreements = 0
for module, target, tag in rows:
    stats = load(tag)
    with open(os.path.join(out, tag + ".hlo")) as f:
        recount = counter.count_kernels(f.read())
    theirs = xla.get(module, {})
    xla_kernels = "n/a" if "kernels" not in theirs else str(theirs["kernels"])
    xla_cov = "n/a" if "kernels" not in theirs else "%.3f" % theirs["fusion_coverage"]
    # An unfused reshape with row-major layouts moves no byte: XLA prints it as a bitcast
    # (no code), while our analysis counts it as a kernel. Shown so the gap is visible.
    reshapes = recount["unfused_kernels_by_opcode"].get("reshape", 0)
    print("| %s | %s | %d | %.3f | %s | %s | %d | %s |" % (
        module, target, stats["kernel_count"], stats["fusion_coverage"],
        xla_kernels, xla_cov, reshapes, owners(stats)))
    # Cross-check: the Python counter on our optimized module vs our C++ analysis.
    on_device = all(stats["instructions_by_owner"][o] == 0 for o in
                    ("host-fallback", "unsupported-custom-call", "collective"))
    if on_device and (recount["kernels"] != stats["kernel_count"] or
                      abs(recount["fusion_coverage"] - stats["fusion_coverage"]) > 1e-9):
        disagreements += 1
        print("CHECK FAILED: %s %s: counter %d kernels / %.4f, stats %d / %.4f" % (
            module, target, recount["kernels"], recount["fusion_coverage"],
            stats["kernel_count"], stats["fusion_coverage"]), file=sys.stderr)

print()
if xla:
    for module in modules + [gemma]:
        r = xla.get(module, {})
        if "error" in r:
            print("XLA CPU failed on %s: %s" % (module, r["error"]))
    print("XLA CPU fusions by kind / unfused kernels:")
    print()
    for module in modules + [gemma]:
        r = xla.get(module, {})
        if "kernels" in r:
            unfused = ", ".join("%s %d" % kv for kv in r["unfused_kernels_by_opcode"].items())
            print("- %s: %s; unfused: %s" % (module, ", ".join(
                "%s %d" % kv for kv in r["fusions_by_kind"].items()), unfused or "none"))
else:
    print("XLA CPU: not measured (bench/xla_kernel_counts.py exit %s; see %s/xla_cpu.log)"
          % (xla_cpu_rc, out))
print()
print("XLA GPU: %s" % ("not available on this machine (no GPU / no CUDA jaxlib)"
                       if xla_gpu_rc == "2" else "see %s/xla_gpu.md" % out))
print()

runs = []  # (pipeline ms, "wall user sys" of the whole command, tag)
for run in range(1, int(gemma_runs) + 1):
    tag = "%s.cpu.run%d" % (gemma, run)
    with open(os.path.join(out, tag + ".time")) as f:
        wall, user, system = (float(v) for v in f.read().split())
    runs.append((load(tag)["total_pass_time_ms"], (wall, user + system), tag))
median = sorted(runs)[(len(runs) - 1) // 2]
stats = load(median[2])
total = stats["total_pass_time_ms"]
print("%s, cpu: pipeline %s ms over %d runs (median %.1f ms); whole `retarget compile` "
      "command (parse, pipeline, analysis, write) %s s wall, %s s CPU; %d kernels, "
      "coverage %.3f" % (
          gemma, " / ".join("%.1f" % r[0] for r in runs), len(runs), total,
          " / ".join("%.2f" % r[1][0] for r in runs), " / ".join("%.2f" % r[1][1] for r in runs),
          stats["kernel_count"], stats["fusion_coverage"]))
print()
print("| # | pass | changed | ms | % of pipeline |")
print("|---|---|---|---|---|")
for number, p in enumerate(stats["passes"], 1):
    print("| %d | %s | %s | %.2f | %.1f |" % (
        number, p["name"], "skipped" if p["skipped"] else ("yes" if p["changed"] else "no"),
        p["ms"], 100.0 * p["ms"] / total if total else 0.0))
print("| | total | | %.2f | 100.0 |" % total)
sys.exit(1 if disagreements else 0)
PYTHON
