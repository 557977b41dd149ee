#!/usr/bin/env python3
"""XLA as an independent oracle: every corpus module that fits the budget runs on XLA:CPU
(jaxlib, pinned in scripts/python-requirements.txt) and on Retarget's interpreter with the same
inputs, and the outputs are compared. Nothing expected is stored: XLA computes it at test time.

  tests/xla/xla_oracle.py --retarget build/bin/retarget [--table FILE.md] [FILE.hlo ...]

Per module:
  1. `retarget run M --target interp --inputs random:SEED --save-inputs in.npz --output ours.npz`
     (our input generator knows each parameter's value domain: indices in range, variances
     positive, so XLA sees the same meaningful inputs);
  2. our proto writer gives XLA the module (`retarget print --format proto`), XLA:CPU compiles
     and runs it on in.npz;
  3. every output is compared: integers and pred exactly; floats element by element within
     atol + rtol x (|XLA's value| + the array's largest |value|), rtol and atol by element type
     (below): the second term is a norm-wise bound, because a deep network's small outputs are
     differences of large terms whose rounding depends on summation order; complex values on
     the modulus of the difference. "bit-identical" when every bit agrees. An output listed in
     KNOWN_DIFFERENCES (a documented, intended difference) is reported, not compared.

A module is not run, and the table says why, when its inputs exceed --max-input-bytes (the
machine must hold XLA's and the interpreter's copies), when it is in BEYOND_THE_SUITE (too slow
or too large for the interpreter in the suite; naming the file runs it anyway), when the
interpreter needs more than --timeout seconds, or when XLA:CPU itself cannot compile or run it
(its error is quoted).
Exit status 1 when any module was rejected by XLA's proto reader or did not match.
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from check_proto_with_jax import (  # noqa: E402
    CORPUS, npz_value, numpy_dtype, parameter_arrays, run_on_xla_cpu, to_proto)

# (rtol, atol) by XLA element type name. Wider than `retarget compare`'s defaults: XLA:CPU fuses
# and reorders reductions and keeps bf16 in f32 inside fusions (its default excess precision),
# so a correct interpreter differs from it by accumulated rounding, not by one rounding.
TOLERANCES = {
    "float64": (1e-9, 1e-12),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
}
MINIFLOAT_TOLERANCE = (0.25, 0.25)  # two units in the last place of a 3-bit mantissa

# Modules the suite does not run, measured on the 2-core build machine (run them by naming the
# file; the limits below do not apply to a module named on the command line).
BEYOND_THE_SUITE = {
    "mobilenet_v2.hlo": "the interpreter needs about 110 s and 10 GB (see docs/testing.md)",
    "jax.b380442861.hlo": "10^6 loop trips: minutes in the interpreter",
}

# Outputs that differ from XLA by design (docs/hlo.md says why): (module, output) -> reason.
KNOWN_DIFFERENCES = {
    ("thunk_coverage_cpu.hlo", 15): "GetRngSeed: XLA draws a seed per run, the interpreter's is 42",
    ("thunk_coverage_cpu.hlo", 16):
        "rng-get-and-update-state: XLA's state is per executable (0x7012395, then + delta per "
        "call); the interpreter's is a hash of the instruction name, the same on every run and "
        "target",
}


def tolerance_for(dtype_name):
    if dtype_name in TOLERANCES:
        return TOLERANCES[dtype_name]
    if dtype_name.startswith(("float8", "float4")):
        return MINIFLOAT_TOLERANCE
    return (0.0, 0.0)  # integers and pred: exact


def compare(module, ours, theirs, dtype_names):
    """'bit-identical' | 'MATCHED' | 'MISMATCH: ...', with the known differences appended."""
    if len(ours) != len(theirs):
        return "MISMATCH: %d outputs from the interpreter, %d from XLA" % (len(ours), len(theirs))
    identical = True
    skipped = []
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if (module, i) in KNOWN_DIFFERENCES:
            skipped.append("out%d not compared: %s" % (i, KNOWN_DIFFERENCES[(module, i)]))
            continue
        if a.shape != b.shape:
            return "MISMATCH: out%d has shape %s, XLA's %s" % (i, a.shape, b.shape)
        # Complex values compare on the modulus of the difference, real ones on |a - b|.
        a, b = np.asarray(a), np.asarray(b)
        wide = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
        a, b = a.astype(wide), b.astype(wide)
        nan = np.isnan(a) | np.isnan(b)
        same_nan = np.isnan(a) == np.isnan(b)
        with np.errstate(invalid="ignore"):
            error = np.where(nan | (a == b), 0.0, np.abs(a - b))
        scale = np.abs(b)
        bits_equal = np.array_equal(a, b, equal_nan=True)
        identical = identical and bits_equal
        if bits_equal:
            continue
        rtol, atol = tolerance_for(dtype_names[i])
        error = np.nan_to_num(error, nan=np.inf, posinf=np.inf)
        finite_scale = np.nan_to_num(scale, nan=0.0, posinf=0.0)
        largest = finite_scale.max() if finite_scale.size else 0.0
        allowed = atol + rtol * (finite_scale + largest)
        bad = (~same_nan) | (error > allowed)
        if bad.any():
            index = np.unravel_index(np.argmax(np.where(bad, error - allowed, -np.inf)), bad.shape)
            return ("MISMATCH: out%d%s interpreter %r, XLA %r (%d of %d elements beyond rtol %g "
                    "atol %g)" % (i, list(index), a[index], b[index], int(bad.sum()), bad.size,
                                  rtol, atol))
    verdict = "bit-identical" if identical else "MATCHED"
    return "; ".join([verdict] + skipped)


def input_bytes(computation):
    total = 0
    for shape in computation.program_shape().parameter_shapes():
        leaves = shape.tuple_shapes() if shape.is_tuple() else [shape]
        for leaf in leaves:
            dtype = numpy_dtype(leaf)
            total += int(np.prod(leaf.dimensions())) * (dtype.itemsize if dtype is not None else 8)
    return total


def run_module(retarget, path, computation, mlir_text, args, workdir):
    size = input_bytes(computation)
    if size > args.max_input_bytes:
        return "not run: inputs of %.1f GB exceed the oracle's budget of %.1f GB" % (
            size / 1e9, args.max_input_bytes / 1e9)
    shapes = computation.program_shape().parameter_shapes()
    if any(s.is_tuple() for s in shapes):
        return "not run: a tuple parameter (XLA's client takes array arguments)"
    in_npz = os.path.join(workdir, "in.npz")
    ours_npz = os.path.join(workdir, "ours.npz")
    try:
        subprocess.run([retarget, "run", path, "--target", "interp", "--inputs",
                        "random:%d" % args.seed, "--save-inputs", in_npz, "--output", ours_npz,
                        "--force"], check=True, capture_output=True, text=True,
                       timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "not run: the interpreter needs more than %d s" % args.timeout
    except subprocess.CalledProcessError as e:
        return "INTERPRETER FAILED: " + (e.stderr.strip().splitlines() or ["?"])[-1]
    inputs = parameter_arrays(shapes, np.load(in_npz), in_npz)
    try:
        theirs = run_on_xla_cpu(mlir_text, inputs)
    except Exception as e:  # XLA raises its own status types
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return "not run: XLA:CPU cannot run it (%s)" % first[:160]
    names = [t.dtype.name for t in theirs]
    theirs = [npz_value(t) for t in theirs]
    ours = np.load(ours_npz)
    ours = [ours["out%d" % i] for i in range(len(ours.files))]
    return compare(os.path.basename(path), ours, theirs, names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help=".hlo modules (default: the whole corpus)")
    parser.add_argument("--retarget", required=True, help="path to the retarget CLI")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-input-bytes", type=float, default=1e9,
                        help="modules with larger inputs are not run (default 1e9)")
    parser.add_argument("--timeout", type=int, default=60,
                        help="interpreter time limit per module, seconds (default 60)")
    parser.add_argument("--table", help="also write the results as a Markdown table here")
    args = parser.parse_args()

    import jax
    jax.config.update("jax_enable_x64", True)  # f64 modules (TORAX) keep their f64 inputs
    from jax._src.lib import xla_client as xc

    named = bool(args.files)
    files = args.files or sorted(glob.glob(os.path.join(CORPUS, "*.hlo")))
    rows, failures = [], 0
    with tempfile.TemporaryDirectory() as workdir:
        for path in files:
            name = os.path.basename(path)
            start = time.time()
            if not named and name in BEYOND_THE_SUITE:
                rows.append((name, "not run: " + BEYOND_THE_SUITE[name], 0.0))
                print("%-55s %s" % (name, rows[-1][1]), flush=True)
                continue
            print("xla-oracle: %s ..." % name, file=sys.stderr, flush=True)
            try:
                with open(to_proto(args.retarget, path, workdir), "rb") as f:
                    computation = xc.XlaComputation(f.read())
                computation.as_hlo_text()  # XLA rebuilds the module from our proto
                mlir_text = xc._xla.mlir.xla_computation_to_mlir_module(computation)
                outcome = run_module(args.retarget, path, computation, mlir_text, args, workdir)
            except subprocess.CalledProcessError as e:
                outcome = "PROTO WRITE FAILED: " + e.stderr.strip()[:200]
            except Exception as e:
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                outcome = "REJECTED by XLA's proto reader: " + first[:200]
            failed = outcome.startswith(("MISMATCH", "INTERPRETER", "PROTO", "REJECTED"))
            failures += failed
            seconds = time.time() - start
            rows.append((name, outcome, seconds))
            print("%-55s %s (%.1f s)" % (name, outcome, seconds), flush=True)
    print("%d module(s), %d failure(s)" % (len(rows), failures))
    if args.table:
        with open(args.table, "w") as out:
            out.write("| module | result | seconds |\n|---|---|---|\n")
            for name, outcome, seconds in rows:
                out.write("| %s | %s | %.1f |\n" % (name, outcome.replace("|", "\\|"), seconds))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
