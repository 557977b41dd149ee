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
from check_proto_with_jax import (  # noqa: E402
    find_retarget, npz_value, parameter_arrays, run_on_xla_cpu, to_proto)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help=".hlo text or .pb proto")
    parser.add_argument("--inputs", required=True, help=".npz with arg0, arg1, ... (no tuples)")
    parser.add_argument("--output", required=True, help=".npz to write out0, out1, ... into")
    parser.add_argument("--retarget", help="path to the retarget CLI")
    args = parser.parse_args()

    from jax._src.lib import xla_client as xc

    retarget = find_retarget(args.retarget)
    with tempfile.TemporaryDirectory() as workdir:
        with open(to_proto(retarget, args.file, workdir), "rb") as f:
            computation = xc.XlaComputation(f.read())
    mlir_text = xc._xla.mlir.xla_computation_to_mlir_module(computation)
    inputs = parameter_arrays(computation.program_shape().parameter_shapes(),
                              np.load(args.inputs), args.inputs)
    print("compiling with XLA:CPU ...", file=sys.stderr)
    outputs = [npz_value(a) for a in run_on_xla_cpu(mlir_text, inputs)]
    np.savez(args.output, **{"out%d" % i: a for i, a in enumerate(outputs)})
    print("wrote %s (%d arrays)" % (args.output, len(outputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
