#!/usr/bin/env python3
"""Interop check: does XLA itself accept the HloModuleProtos that Retarget writes?

Dev-only (needs jax/jaxlib, never part of the build or of `make test`). For each input:

  1. HLO text is converted with our writer: `retarget print FILE --format proto -o X.pb`
     (a .pb input is used as is);
  2. the bytes go to jaxlib's `xla_client.XlaComputation(bytes)` and XLA rebuilds an HloModule
     from them (`as_hlo_text()` runs HloModule::CreateFromProto) -> "accepted";
  3. `xla_client._xla.mlir.xla_computation_to_mlir_module` converts it to MLIR -> "mlir";
  4. with --run: random inputs are written to an .npz, our interpreter runs the module
     (`retarget run FILE --target interp --inputs in.npz --output out.npz`), XLA's CPU client
     compiles the MLIR and runs it on the same inputs, and the outputs are compared
     (MATCHED / MISMATCH with the worst element).

Run from the repository root after building the CLI (any build dir), e.g.

  python3 scripts/check_proto_with_jax.py                       # every corpus file, steps 1-3
  python3 scripts/check_proto_with_jax.py --run --max-elements 5e6
  python3 scripts/check_proto_with_jax.py --retarget build-proto/bin/retarget some.hlo other.pb
  python3 scripts/check_proto_with_jax.py --write-xla-sample tests/data/proto/xla_sample.pb

Exit status: 0 when every file was accepted (and, with --run, every run matched or was skipped).
Checked with jax/jaxlib 0.10.2 on CPU.
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(REPO), "shared", "corpus", "xla")


def find_retarget(explicit):
    if explicit:
        return explicit
    candidates = [os.path.join(REPO, "build", "bin", "retarget")]
    candidates += sorted(glob.glob(os.path.join(REPO, "build-*", "bin", "retarget")))
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    sys.exit("no retarget binary found; build it or pass --retarget PATH")


def to_proto(retarget, path, workdir):
    if path.endswith(".pb"):
        return path
    out = os.path.join(workdir, os.path.basename(path) + ".pb")
    subprocess.run([retarget, "print", path, "--format", "proto", "-o", out, "--force"],
                   check=True, capture_output=True, text=True)
    return out


def numpy_dtype(shape):
    """The numpy dtype of an XLA array shape (ml_dtypes.bfloat16 for bf16), or None."""
    try:
        return np.dtype(shape.numpy_dtype())
    except Exception:  # token, opaque, ... types numpy cannot hold
        return None


def random_inputs(parameter_shapes, seed, float_range=(-1.0, 1.0)):
    """Floats uniform in float_range, integers in [0, 8), pred random; None if unsupported."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape in parameter_shapes:
        if shape.is_tuple():
            return None
        dtype = numpy_dtype(shape)
        if dtype is None:
            return None
        dims = tuple(shape.dimensions())
        if dtype == np.bool_:
            arrays.append(rng.integers(0, 2, dims).astype(np.bool_))
        elif np.issubdtype(dtype, np.integer):
            arrays.append(rng.integers(0, 8, dims).astype(dtype))
        else:
            arrays.append(rng.uniform(*float_range, dims).astype(np.float32).astype(dtype))
    return arrays


def npz_value(array):
    # numpy has no bf16 or 8-/4-bit floats: the .npz contract stores them as float32 (exact),
    # and s4/u4 as int8/uint8.
    name = array.dtype.name
    if name == "bfloat16" or name.startswith("float8") or name.startswith("float4"):
        return array.astype(np.float32)
    if name == "int4":
        return array.astype(np.int8)
    if name == "uint4":
        return array.astype(np.uint8)
    return array


def parameter_arrays(shapes, given, source):
    """The entries arg0, arg1, ... of the loaded .npz `given`, each in its parameter's dtype and
    shape (bf16 and the 8-/4-bit floats arrive as float32). Exits naming `source` when an entry
    is missing or a parameter is a tuple."""
    arrays = []
    for i, shape in enumerate(shapes):
        if shape.is_tuple():
            sys.exit("parameter %d is a tuple; XLA's client takes array arguments only" % i)
        name = "arg%d" % i
        if name not in given.files:
            sys.exit("%s: missing entry %s" % (source, name))
        arrays.append(given[name].astype(numpy_dtype(shape)).reshape(tuple(shape.dimensions())))
    return arrays


def run_on_xla_cpu(mlir_text, inputs):
    """Compiles `mlir_text` with XLA:CPU for one device and runs it on `inputs` (numpy arrays);
    returns the outputs as numpy arrays in XLA's own dtypes. XLA's errors propagate."""
    import jax
    from jax._src.lib import xla_client as xc

    client = jax.devices("cpu")[0].client
    devices = xc.DeviceList(tuple(jax.devices("cpu")[:1]))
    executable = client.compile_and_load(mlir_text, devices, xc.CompileOptions())
    results = executable.execute_sharded([jax.device_put(a) for a in inputs])
    return [np.asarray(r[0]) for r in results.disassemble_into_single_device_arrays()]


def run_and_compare(retarget, hlo_path, computation, mlir_text, args):
    shapes = computation.program_shape().parameter_shapes()
    total = sum(int(np.prod(s.dimensions())) for s in shapes if not s.is_tuple())
    if total > args.max_elements:
        return "skipped (%d input elements)" % total
    inputs = random_inputs(shapes, args.seed, args.float_range)
    if inputs is None:
        return "skipped (tuple or unsupported parameter type)"
    with tempfile.TemporaryDirectory() as tmp:
        in_npz, out_npz = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(in_npz, **{"arg%d" % i: npz_value(a) for i, a in enumerate(inputs)})
        try:
            subprocess.run([retarget, "run", hlo_path, "--target", "interp", "--inputs", in_npz,
                            "--output", out_npz, "--force"], check=True, capture_output=True,
                           text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return "skipped (interpreter took over %ds)" % args.timeout
        except subprocess.CalledProcessError as e:
            return "interp failed: " + (e.stderr.strip().splitlines() or ["?"])[-1]
        ours = np.load(out_npz)
        ours = [ours["out%d" % i] for i in range(len(ours.files))]

    try:
        theirs = run_on_xla_cpu(mlir_text, inputs)
    except Exception as e:  # e.g. a custom call or fusion kind XLA:CPU has no lowering for
        return "skipped (XLA:CPU cannot run it: %s)" % str(e).strip().splitlines()[0][:200]
    if len(theirs) != len(ours):
        return "MISMATCH: %d outputs from XLA, %d from interp" % (len(theirs), len(ours))
    worst = (0.0, None)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        b = npz_value(b)
        if a.shape != b.shape:
            return "MISMATCH: out%d shape %s vs XLA %s" % (i, a.shape, b.shape)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        both_nan = np.isnan(a64) & np.isnan(b64)
        excess = np.abs(a64 - b64) - (args.atol + args.rtol * np.abs(b64))
        excess = np.where(both_nan, -1.0, np.nan_to_num(excess, nan=np.inf))
        if excess.size and excess.max() > worst[0]:
            index = np.unravel_index(np.argmax(excess), excess.shape)
            worst = (excess.max(), "out%d%s: ours %r, XLA %r" % (i, list(index), a64[index],
                                                               b64[index]))
    return "MATCHED" if worst[1] is None else "MISMATCH (worst " + worst[1] + ")"


def write_xla_sample(path):
    """Writes a small HloModuleProto serialized by XLA itself, and XLA's text of it next to it
    (tests/data/proto/ holds the pair):
    a dot, a while loop, reductions and a bf16 constant with -0 and inf. Our reader's tests use
    it as input that our writer never touched."""
    import jax
    import jax.numpy as jnp
    from jax._src.lib import xla_client as xc

    def f(x, w, n):
        y = jnp.tanh(x @ w) + jnp.float32(0.5)
        _, z = jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, y))
        return (jnp.max(z, axis=1), (z > 0).astype(jnp.int32).sum(),
                jnp.array([1.5, -0.0, jnp.inf], jnp.bfloat16))

    lowered = jax.jit(f).lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32),
                               np.int32(3))
    computation = xc._xla.mlir.mlir_module_to_xla_computation(
        lowered.as_text(), use_tuple_args=False, return_tuple=True)
    with open(path, "wb") as out:
        out.write(computation.as_serialized_hlo_module_proto())
    with open(os.path.splitext(path)[0] + ".hlo", "w") as out:  # XLA's text of the same module
        out.write(computation.as_hlo_text())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help=".hlo text or .pb proto (default: the corpus)")
    parser.add_argument("--retarget", help="path to the retarget CLI")
    parser.add_argument("--run", action="store_true", help="also execute and compare")
    parser.add_argument("--max-elements", type=float, default=2e6,
                        help="skip running modules with more input elements (default 2e6)")
    parser.add_argument("--timeout", type=int, default=300, help="interpreter timeout, seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--float-range", type=lambda t: tuple(float(v) for v in t.split(",")),
                        default=(-1.0, 1.0), metavar="LO,HI",
                        help="floating-point inputs are uniform in [LO, HI) (default -1,1); "
                             "e.g. 0.1,1 keeps batch-norm variances positive")
    parser.add_argument("--rtol", type=float, default=2e-2)
    parser.add_argument("--atol", type=float, default=2e-2)
    parser.add_argument("--write-xla-sample", metavar="OUT.pb",
                        help="only write XLA's own proto of a small sample module and exit")
    args = parser.parse_args()
    if args.write_xla_sample:
        write_xla_sample(args.write_xla_sample)
        return 0

    from jax._src.lib import xla_client as xc
    to_mlir = xc._xla.mlir.xla_computation_to_mlir_module

    retarget = find_retarget(args.retarget)
    files = args.files or sorted(glob.glob(os.path.join(CORPUS, "*.hlo")))
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        for path in files:
            name = os.path.basename(path)
            start = time.time()
            try:
                pb = to_proto(retarget, path, workdir)
            except subprocess.CalledProcessError as e:
                print("%-45s WRITE FAILED: %s" % (name, e.stderr.strip()))
                failures += 1
                continue
            try:
                with open(pb, "rb") as f:
                    computation = xc.XlaComputation(f.read())
                computation.as_hlo_text()  # HloModule::CreateFromProto
                status = "accepted"
                mlir_text = to_mlir(computation)
                status += ", mlir ok"
            except Exception as e:  # XLA raises its own status types
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                print("%-45s REJECTED by XLA: %s" % (name, first[:300]))
                failures += 1
                continue
            if args.run:
                outcome = run_and_compare(retarget, path, computation, mlir_text, args)
                status += ", run: " + outcome
                failures += outcome.startswith(("MISMATCH", "interp failed"))
            print("%-45s %s (%.1fs)" % (name, status, time.time() - start))
            sys.stdout.flush()
    print("%d file(s), %d failure(s)" % (len(files), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
