#!/usr/bin/env python3
"""Runs one HLO module on XLA:CPU (jaxlib) with the inputs of a `retarget run` and writes its
outputs in the same .npz form, so `retarget compare` can set XLA beside any of our targets.

Dev-only (needs jax/jaxlib, never part of the build or of `make test`):

  retarget run M.hlo --target cpu --save-inputs in.npz --output cpu.npz
  retarget run M.hlo --target interp --inputs in.npz --output interp.npz
  python3 scripts/run_with_xla.py M.hlo --inputs in.npz --output xla.npz
  retarget compare xla.npz cpu.npz; retarget compare xla.npz interp.npz

The module goes to XLA as the HloModuleProto our writer produces (`retarget print --format
proto`), as in scripts/check_proto_with_jax.py. bf16 and f8 inputs are stored as float32 in the
.npz (exact) and converted to the parameter's type here; outputs are written back the same way.
"""

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_proto_with_jax import find_retarget, npz_value, numpy_dtype, to_proto  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help=".hlo text or .pb proto")
    parser.add_argument("--inputs", required=True, help=".npz with arg0, arg1, ... (no tuples)")
    parser.add_argument("--output", required=True, help=".npz to write out0, out1, ... into")
    parser.add_argument("--retarget", help="path to the retarget CLI")
    args = parser.parse_args()

    import jax
    from jax._src.lib import xla_client as xc

    retarget = find_retarget(args.retarget)
    with tempfile.TemporaryDirectory() as workdir:
        with open(to_proto(retarget, args.file, workdir), "rb") as f:
            computation = xc.XlaComputation(f.read())
    mlir_text = xc._xla.mlir.xla_computation_to_mlir_module(computation)
    shapes = computation.program_shape().parameter_shapes()
    given = np.load(args.inputs)
    inputs = []
    for i, shape in enumerate(shapes):
        if shape.is_tuple():
            sys.exit("parameter %d is a tuple; this script feeds array parameters only" % i)
        name = "arg%d" % i
        if name not in given.files:
            sys.exit("%s: missing entry %s" % (args.inputs, name))
        inputs.append(given[name].astype(numpy_dtype(shape)).reshape(tuple(shape.dimensions())))

    client = jax.devices("cpu")[0].client
    devices = xc.DeviceList(tuple(jax.devices("cpu")[:1]))
    print("compiling with XLA:CPU ...", file=sys.stderr)
    executable = client.compile_and_load(mlir_text, devices, xc.CompileOptions())
    results = executable.execute_sharded([jax.device_put(a) for a in inputs])
    outputs = [npz_value(np.asarray(r[0])) for r in results.disassemble_into_single_device_arrays()]
    np.savez(args.output, **{"out%d" % i: a for i, a in enumerate(outputs)})
    print("wrote %s (%d arrays)" % (args.output, len(outputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
