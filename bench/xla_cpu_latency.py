#!/usr/bin/env python3
"""Latency of HLO modules on XLA's own CPU backend next to `retarget run --target cpu`.

Dev-only (needs jax/jaxlib from PyPI; never part of the build or of `make test`). For each
module, in the same run, on the same cores and on the same inputs:

  1. Retarget: `retarget run FILE --target cpu --save-inputs in.npz --repeat N` draws the
     inputs (`random:0`: in range for what they index, positive where the model divides),
     writes them, and prints `time: median <x> ms, min <y> ms over N runs` and its compile
     time.
  2. XLA: our writer turns the HLO text into an HloModuleProto (`retarget print --format
     proto`, the route of scripts/check_proto_with_jax.py); jaxlib compiles it with its CPU
     client (compile time measured around compile_and_load) and runs it on in.npz: 3 warm-up
     runs, then N timed runs (block_until_ready after each).
  The two sides alternate --rounds times; every sample of a side is pooled.

Retarget's compiled kernels go to a fresh cache directory per module, so the first round's
compile is cold and the second's loads them (both are printed).

XLA's samples include jaxlib's Python dispatch (execute_sharded and block_until_ready). The
script measures that cost on a one-scalar module in the same run and subtracts its median from
every XLA sample (printed as `dispatch`), so small modules are not flattered in our favour.

Both sides run under the same CPU affinity (--cores, default: every core this process may use),
so they use the same number of threads: XLA:CPU sizes its intra-op pool from the affinity mask,
and the script passes the same count to Retarget with --threads when the CLI has that flag.

Output: a markdown table (module, medians, spreads as the interquartile range in % of the
median, speedup = XLA median / ours, compile times), then the geometric mean of the speedups
over every module that ran on both sides, and over those without loops (`while` in the text),
and the slowest module. --update-doc FILE replaces the text between the lines
`<!-- xla-cpu-table:begin -->` and `<!-- xla-cpu-table:end -->` of FILE with the same output.
Modules whose parameters take more than --max-input-gib are listed as skipped (three copies
of them must fit: ours, XLA's and the .npz).

Exit status 0 when every module that was not skipped ran on both sides, 1 otherwise.

Usage (repository root, after `make build`):
  python3 bench/xla_cpu_latency.py --all              # every corpus module and bench/models
  python3 bench/xla_cpu_latency.py                    # four corpus modules
  python3 bench/xla_cpu_latency.py --repeat 50 --modules layer_norm_1x4096x768_bf16 x.hlo
  python3 bench/xla_cpu_latency.py --cores 0          # one core, one thread each
  python3 bench/xla_cpu_latency.py --all --update-doc docs/perf.md
"""

import argparse
import functools
import glob
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from check_proto_with_jax import CORPUS, numpy_dtype, parameter_arrays, to_proto  # noqa: E402
from doc_markers import replace_marked  # noqa: E402

DEFAULT_MODULES = ["resnet50_keras_jax_f32", "mha_block_1x12x128x64_bf16",
                   "layer_norm_1x4096x768_bf16", "dlrm_keras_jax_f32_test_step"]
TIME_RE = re.compile(r"time: median ([0-9.eE+-]+) ms, min ([0-9.eE+-]+) ms")
COMPILE_RE = re.compile(r"compile(?: time)?:? ([0-9.eE+-]+) ms")
DOC_BEGIN = "<!-- xla-cpu-table:begin -->"
DOC_END = "<!-- xla-cpu-table:end -->"
DISPATCH_PROBE = """HloModule dispatch_probe
ENTRY main {
  p = f32[] parameter(0)
  ROOT r = f32[] add(p, p)
}
"""


def module_path(name):
    if os.path.sep in name or name.endswith(".hlo"):
        return name
    return os.path.join(CORPUS, name + ".hlo")


def every_module():
    return (sorted(glob.glob(os.path.join(CORPUS, "*.hlo")))
            + sorted(glob.glob(os.path.join(REPO, "bench", "models", "*.hlo"))))


def has_loop(path):
    with open(path, errors="replace") as f:
        return re.search(r"\bwhile\(", f.read()) is not None


class XlaModule:
    """A module compiled by XLA:CPU, with its parameter shapes."""

    def __init__(self, retarget, hlo_path, workdir):
        import jax
        from jax._src.lib import xla_client as xc
        with open(to_proto(retarget, hlo_path, workdir), "rb") as f:
            computation = xc.XlaComputation(f.read())
        self.parameter_shapes = computation.program_shape().parameter_shapes()
        self.device = jax.devices("cpu")[0]
        mlir_text = xc._xla.mlir.xla_computation_to_mlir_module(computation)
        start = time.perf_counter()
        self.executable = self.device.client.compile_and_load(
            mlir_text, xc.DeviceList((self.device,)), xc.CompileOptions())
        self.compile_ms = (time.perf_counter() - start) * 1e3

    def input_bytes(self):
        total = 0
        for shape in self.parameter_shapes:
            dtype = numpy_dtype(shape)
            count = math.prod(shape.dimensions()) if not shape.is_tuple() else 0
            total += count * (dtype.itemsize if dtype is not None else 0)
        return total

    def time(self, host_arguments, repeat):
        """Samples in ms: 3 warm-up runs, then `repeat` timed ones."""
        import jax

        def run_once():
            # Fresh device buffers per run, outside the timed region: modules with
            # input_output_alias (training steps) donate their parameters.
            arguments = [jax.device_put(a, self.device) for a in host_arguments]
            jax.block_until_ready(arguments)
            start = time.perf_counter()
            results = self.executable.execute_sharded(arguments)
            jax.block_until_ready(results.disassemble_into_single_device_arrays())
            return (time.perf_counter() - start) * 1e3

        for _ in range(3):
            run_once()
        return [run_once() for _ in range(repeat)]


@functools.lru_cache(maxsize=None)
def retarget_has_flag(retarget, flag):
    """Whether `retarget run` takes `flag` (asked once per binary and flag)."""
    help_text = subprocess.run([retarget, "run", "--help"], capture_output=True, text=True).stdout
    return flag in help_text


def time_retarget(retarget, hlo_path, repeat, threads, inputs_npz, cache_dir):
    """(median_ms, min_ms, compile_ms or None); writes the inputs it drew to `inputs_npz`.
    Compiled kernels are kept in `cache_dir` (empty at the module's first round: a cold compile)."""
    command = [retarget, "run", hlo_path, "--target", "cpu", "--inputs", "random:0",
               "--repeat", str(repeat), "--save-inputs", inputs_npz, "--force"]
    if threads and retarget_has_flag(retarget, "--threads"):
        command += ["--threads", str(threads)]
    environment = dict(os.environ, RETARGET_CACHE_DIR=cache_dir)
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise RuntimeError((result.stderr or result.stdout).strip()[-400:])
    output = result.stdout + result.stderr
    timing = TIME_RE.search(output)
    if not timing:
        raise RuntimeError("no 'time: median ...' line in: " + output[-300:])
    compiled = COMPILE_RE.search(output)
    return (float(timing.group(1)), float(timing.group(2)),
            float(compiled.group(1)) if compiled else None)


def find_retarget(explicit):
    path = explicit or os.path.join(REPO, "build", "bin", "retarget")
    if not os.access(path, os.X_OK):
        sys.exit("no retarget binary at %s; build it or pass --retarget PATH" % path)
    return path


def spread_percent(samples):
    """Interquartile range in % of the median."""
    if len(samples) < 4:
        return 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return 100.0 * (q3 - q1) / statistics.median(samples)


def measure_dispatch(retarget, workdir, repeat):
    import numpy as np
    path = os.path.join(workdir, "dispatch_probe.hlo")
    with open(path, "w") as f:
        f.write(DISPATCH_PROBE)
    probe = XlaModule(retarget, path, workdir)
    return statistics.median(probe.time([np.float32(1.0)], max(repeat, 50)))


def measure(retarget, path, args, threads, workdir, dispatch_ms):
    """One table row's numbers, or raises with the reason."""
    import numpy as np
    xla = XlaModule(retarget, path, workdir)
    gib = xla.input_bytes() / 2**30
    if gib > args.max_input_gib:
        return {"skipped": "parameters take %.1f GiB (--max-input-gib %.1f)"
                           % (gib, args.max_input_gib)}
    inputs_npz = os.path.join(workdir, "inputs.npz")
    cache_dir = tempfile.mkdtemp(dir=workdir)  # this module's kernels only
    ours_medians, ours_mins, ours_compiles, xla_samples = [], [], [], []
    for round_index in range(args.rounds):
        print("  round %d: retarget" % (round_index + 1), file=sys.stderr, flush=True)
        median, minimum, compile_ms = time_retarget(retarget, path, args.repeat, threads,
                                                    inputs_npz, cache_dir)
        ours_compiles.append(compile_ms)
        # The CLI prints milliseconds with three decimals: below 1 us it reads 0.000. Floored
        # at 0.001 ms, as XLA's samples are, so a no-op module has a ratio, not a division by 0.
        ours_medians.append(max(median, 1e-3))
        ours_mins.append(max(minimum, 1e-3))
        if round_index == 0:
            with np.load(inputs_npz) as given:
                host_arguments = parameter_arrays(xla.parameter_shapes, given, inputs_npz)
        print("  round %d: XLA" % (round_index + 1), file=sys.stderr, flush=True)
        xla_samples += [max(s - dispatch_ms, 1e-3) for s in xla.time(host_arguments, args.repeat)]
    # The CLI reports a median per round, not its samples: the rounds' medians stand in for
    # them (their spread is the round-to-round spread).
    ours = statistics.median(ours_medians)
    return {"xla_median": statistics.median(xla_samples), "xla_min": min(xla_samples),
            "xla_spread": spread_percent(xla_samples), "ours_median": ours,
            "ours_min": min(ours_mins),
            "ours_spread": 100.0 * (max(ours_medians) - min(ours_medians)) / ours,
            "xla_compile": xla.compile_ms, "ours_compile": ours_compiles[0],
            "ours_compile_cached": ours_compiles[1] if len(ours_compiles) > 1 else None,
            "loop": has_loop(path)}


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retarget", help="the CLI binary (default build/bin/retarget)")
    parser.add_argument("--modules", nargs="*", default=None,
                        help="corpus module names or .hlo paths (default: four corpus modules)")
    parser.add_argument("--all", action="store_true",
                        help="every corpus module and every bench/models module, then --modules")
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per side and round")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two sides")
    parser.add_argument("--max-input-gib", type=float, default=3.0)
    parser.add_argument("--cores", help="CPU list for both runs, e.g. 0 or 0,1 (default: all)")
    parser.add_argument("--update-doc", help="replace the marked table in this markdown file")
    args = parser.parse_args()
    retarget = find_retarget(args.retarget)
    if args.cores:
        os.sched_setaffinity(0, {int(c) for c in args.cores.split(",")})
    threads = len(os.sched_getaffinity(0))
    try:
        import jax  # imported after the affinity is set: XLA sizes its pool then
        # 64-bit parameters (s64 steps, TORAX's f64) must reach XLA as they are, not narrowed.
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        print("jax is not installed: pip install jax (XLA:CPU is the baseline of this script)")
        return 2
    modules = (every_module() if args.all else []) + [module_path(m) for m in args.modules or []]
    if not modules:
        modules = [module_path(m) for m in DEFAULT_MODULES]

    lines = []

    def emit(line):
        print(line)
        sys.stdout.flush()
        lines.append(line)

    failures, speedups, loop_free = 0, {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        dispatch_ms = measure_dispatch(retarget, workdir, args.repeat)
        emit("threads: %d (both), %d rounds x %d runs per side, jaxlib %s; XLA dispatch "
             "%.3f ms subtracted" % (threads, args.rounds, args.repeat, jax.__version__,
                                      dispatch_ms))
        emit("")
        emit("| module | XLA median ms (IQR %) | ours median ms (spread %) | speedup "
             "(XLA/ours) | XLA min ms | ours min ms | XLA compile ms | ours compile ms, "
             "cold / cached |")
        emit("|---|---|---|---|---|---|---|---|")
        for index, path in enumerate(modules):
            name = os.path.basename(path).removesuffix(".hlo")
            print("[%d/%d] %s" % (index + 1, len(modules), name), file=sys.stderr, flush=True)
            try:
                row = measure(retarget, path, args, threads, workdir, dispatch_ms)
            except Exception as error:  # one module failing must not hide the others
                emit("| %s | failed: %s | | | | | | |"
                     % (name, " ".join(str(error).split())[:200].replace("|", "/")))
                failures += 1
                continue
            if "skipped" in row:
                emit("| %s | skipped: %s | | | | | | |" % (name, row["skipped"]))
                continue
            speedup = row["xla_median"] / row["ours_median"]
            speedups[name] = speedup
            if not row["loop"]:
                loop_free[name] = speedup
            def ms(value):
                return "%.0f" % value if value is not None else "n/a"
            emit("| %s%s | %.3f (%.0f) | %.3f (%.0f) | %.2fx | %.3f | %.3f | %.0f | %s / %s |"
                 % (name, " (loop)" if row["loop"] else "", row["xla_median"],
                    row["xla_spread"], row["ours_median"], row["ours_spread"], speedup,
                    row["xla_min"], row["ours_min"], row["xla_compile"],
                    ms(row["ours_compile"]), ms(row["ours_compile_cached"])))
    emit("")
    if speedups:
        slowest = min(speedups, key=speedups.get)
        emit("geomean speedup: %.2fx over %d modules; %.2fx over the %d without loops; slowest "
             "%s at %.2fx" % (geomean(speedups.values()), len(speedups),
                              geomean(loop_free.values()), len(loop_free), slowest,
                              speedups[slowest]))
    if args.update_doc:
        replace_marked(args.update_doc, DOC_BEGIN, DOC_END, lines)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
