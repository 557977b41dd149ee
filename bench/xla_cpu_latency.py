#!/usr/bin/env python3
"""Latency of corpus modules on XLA's own CPU backend next to `retarget run --target cpu`.

Dev-only (needs jax/jaxlib from PyPI; never part of the build or of `make test`). For each
module, in the same run and on the same cores:

  1. XLA: our writer turns the HLO text into an HloModuleProto (`retarget print --format proto`,
     the route of scripts/check_proto_with_jax.py); jaxlib rebuilds the computation, converts it
     to MLIR and compiles it with its CPU client (compile time measured around
     compile_and_load); the executable runs on random inputs of the parameters' shapes, a few
     warm-up runs, then --repeat timed runs (block_until_ready after each).
  2. Retarget: `retarget run FILE --target cpu --inputs random:0 --repeat N`, whose stdout
     carries `time: median <x> ms, min <y> ms over N runs` and the compile time.

Both run under the same CPU affinity (--cores, default: every core this process may use), so
they use the same number of threads: XLA:CPU sizes its intra-op pool from the affinity mask, and
the script passes the same count to Retarget with --threads when the CLI has that flag.

Prints a markdown table (module, XLA median/min ms, ours median/min ms, speedup = XLA/ours,
compile times) and exits 0 when every module ran on both, 1 otherwise.

Usage (repository root, after `make build`):
  python3 bench/xla_cpu_latency.py                    # the four modules of issue 4
  python3 bench/xla_cpu_latency.py --repeat 50 --modules layer_norm_1x4096x768_bf16
  python3 bench/xla_cpu_latency.py --cores 0          # one core, one thread each
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(REPO), "shared", "corpus", "xla")
DEFAULT_MODULES = ["resnet50_keras_jax_f32", "mha_block_1x12x128x64_bf16",
                   "layer_norm_1x4096x768_bf16", "dlrm_keras_jax_f32_test_step"]
TIME_RE = re.compile(r"time: median ([0-9.eE+-]+) ms, min ([0-9.eE+-]+) ms")
COMPILE_RE = re.compile(r"compile(?: time)?:? ([0-9.eE+-]+) ms")


def module_path(name):
    if os.path.sep in name or name.endswith(".hlo"):
        return name
    return os.path.join(CORPUS, name + ".hlo")


def random_argument(shape, rng):
    """A random array of an XLA parameter shape (floats in [-1, 1), small integers, bools)."""
    import ml_dtypes
    import numpy as np
    dtype = shape.numpy_dtype()
    dims = shape.dimensions()
    if dtype == np.bool_:
        return rng.integers(0, 2, dims).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 4, dims).astype(dtype)
    values = rng.uniform(-1.0, 1.0, dims).astype(np.float32)
    return values.astype(ml_dtypes.bfloat16 if dtype == ml_dtypes.bfloat16 else dtype)


def time_xla(retarget, hlo_path, repeat, workdir):
    """(median_ms, min_ms, compile_ms) of the module on XLA:CPU."""
    import jax
    import numpy as np
    from jax._src.lib import xla_client as xc

    proto = os.path.join(workdir, os.path.basename(hlo_path) + ".pb")
    subprocess.run([retarget, "print", hlo_path, "--format", "proto", "-o", proto, "--force"],
                   check=True, capture_output=True, text=True)
    with open(proto, "rb") as f:
        computation = xc.XlaComputation(f.read())
    parameter_shapes = computation.program_shape().parameter_shapes()
    mlir_text = xc._xla.mlir.xla_computation_to_mlir_module(computation)
    device = jax.devices("cpu")[0]
    start = time.perf_counter()
    executable = device.client.compile_and_load(mlir_text, xc.DeviceList((device,)),
                                                xc.CompileOptions())
    compile_ms = (time.perf_counter() - start) * 1e3
    rng = np.random.default_rng(0)
    host_arguments = [random_argument(s, rng) for s in parameter_shapes]

    def run_once():
        # Fresh device buffers per run, outside the timed region: modules with
        # input_output_alias (training steps) donate their parameters.
        arguments = [jax.device_put(a, device) for a in host_arguments]
        jax.block_until_ready(arguments)
        start = time.perf_counter()
        results = executable.execute_sharded(arguments)
        jax.block_until_ready(results.disassemble_into_single_device_arrays())
        return (time.perf_counter() - start) * 1e3

    for _ in range(3):
        run_once()
    samples = [run_once() for _ in range(repeat)]
    return statistics.median(samples), min(samples), compile_ms


def retarget_has_flag(retarget, flag):
    help_text = subprocess.run([retarget, "run", "--help"], capture_output=True, text=True).stdout
    return flag in help_text


def time_retarget(retarget, hlo_path, repeat, threads):
    """(median_ms, min_ms, compile_ms or None) of `retarget run --target cpu`."""
    command = [retarget, "run", hlo_path, "--target", "cpu", "--inputs", "random:0",
               "--repeat", str(repeat)]
    if threads and retarget_has_flag(retarget, "--threads"):
        command += ["--threads", str(threads)]
    result = subprocess.run(command, capture_output=True, text=True)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retarget", help="the CLI binary (default build/bin/retarget)")
    parser.add_argument("--modules", nargs="*", default=DEFAULT_MODULES,
                        help="corpus module names or .hlo paths")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cores", help="CPU list for both runs, e.g. 0 or 0,1 (default: all)")
    args = parser.parse_args()
    retarget = find_retarget(args.retarget)
    if args.cores:
        os.sched_setaffinity(0, {int(c) for c in args.cores.split(",")})
    threads = len(os.sched_getaffinity(0))
    try:
        import jax  # noqa: F401  (imported after the affinity is set: XLA sizes its pool then)
    except ImportError:
        print("jax is not installed: pip install jax (XLA:CPU is the baseline of this script)")
        return 2

    print("threads: %d (both)  repeat: %d" % (threads, args.repeat))
    print("| module | XLA median ms | XLA min ms | ours median ms | ours min ms | speedup "
          "(XLA/ours, median) | XLA compile ms | ours compile ms |")
    print("|---|---|---|---|---|---|---|---|")
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.modules:
            path = module_path(name)
            row = [os.path.basename(path).removesuffix(".hlo")]
            try:
                xla_median, xla_min, xla_compile = time_xla(retarget, path, args.repeat, workdir)
            except Exception as error:  # one module failing must not hide the others
                print("| %s | XLA failed: %s |" % (row[0], str(error)[:200]))
                failures += 1
                continue
            try:
                ours_median, ours_min, ours_compile = time_retarget(retarget, path, args.repeat,
                                                                    threads)
            except Exception as error:
                print("| %s | %.3f | %.3f | failed: %s | | | %.0f | |"
                      % (row[0], xla_median, xla_min, str(error)[:200], xla_compile))
                failures += 1
                continue
            print("| %s | %.3f | %.3f | %.3f | %.3f | %.2fx | %.0f | %s |"
                  % (row[0], xla_median, xla_min, ours_median, ours_min,
                     xla_median / ours_median, xla_compile,
                     "%.0f" % ours_compile if ours_compile is not None else "n/a"))
            sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
