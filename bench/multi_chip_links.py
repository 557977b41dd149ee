#!/usr/bin/env python3
"""Where a tensor-parallel step becomes link-bound: a sharded JAX program on 4 simulated
accelerator chips, swept over the chip-to-chip link bandwidth.

  build/venv/bin/python3 bench/multi_chip_links.py --retarget build/bin/retarget --work DIR

The program is a Megatron-style MLP layer, y = gelu(x W1) W2 with W1 split by columns and W2 by
rows over 4 devices (jax shard_map), so each device ends with a psum (an all-reduce of its
[batch, model] partial product). XLA partitions it for 4 host devices; the per-device module
right after its SPMD partitioner (dumped with --xla_dump_hlo_pass_re=spmd-partitioning, before
XLA:CPU's own passes widen the bf16 dots to f32) runs on:
  - the interpreter and 4 CPU devices (`retarget run --target cpu`, --compare interp);
  - 4 simulated chips of the tpu-v4-mxu preset for each link bandwidth (--compare interp), the
    link latency fixed at 1 us per ring step.
Prints one markdown row per bandwidth: the slowest chip's simulated step time, the share of it
spent on the links, and whether every device matched the interpreter.
"""

import argparse
import glob
import os
import re
import subprocess
import sys


def work_dir():
    """--work, read before jax is imported: XLA's dump folder is set through XLA_FLAGS."""
    for i, arg in enumerate(sys.argv):
        if arg == "--work" and i + 1 < len(sys.argv):
            return os.path.abspath(sys.argv[i + 1])
        if arg.startswith("--work="):
            return os.path.abspath(arg.split("=", 1)[1])
    return None


DUMP = os.path.join(work_dir() or ".", "xla_dump")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=4" +
                           f" --xla_dump_to={DUMP} --xla_dump_hlo_pass_re=spmd-partitioning")

import jax  # noqa: E402  (XLA_FLAGS must be set first)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import shard_map  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

BANDWIDTHS_GBPS = [25, 50, 100, 200, 400, 800]


def tensor_parallel_mlp(batch, model, hidden):
    mesh = Mesh(np.array(jax.devices()[:4]), ("x",))

    def layer(x, w1, w2):
        h = jax.nn.gelu(jnp.dot(x, w1), approximate=True)
        return jax.lax.psum(jnp.dot(h, w2), "x")

    f = jax.jit(shard_map(layer, mesh=mesh, in_specs=(P(), P(None, "x"), P("x", None)),
                          out_specs=P(), check_vma=False))
    x = jnp.zeros((batch, model), jnp.bfloat16)
    w1 = jnp.zeros((model, hidden), jnp.bfloat16)
    w2 = jnp.zeros((hidden, model), jnp.bfloat16)
    f.lower(x, w1, w2).compile()
    dumped = glob.glob(os.path.join(DUMP, "*jit_layer*after_spmd-partitioning*.txt"))
    if len(dumped) != 1:
        sys.exit(f"expected one partitioned module in {DUMP}, found {dumped}")
    with open(dumped[0]) as text:
        return text.read()


def run(args, module, *extra):
    done = subprocess.run([args.retarget, "run", module, "--compare", "interp", *extra],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"retarget run {' '.join(extra)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--retarget", required=True)
    parser.add_argument("--work", required=True, help="directory for the module")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--model", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=4096)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    module = os.path.join(args.work, "tp_mlp.hlo")
    with open(module, "w") as out:
        out.write(tensor_parallel_mlp(args.batch, args.model, args.hidden))
    cpu = run(args, module, "--target", "cpu")
    print(f"tensor-parallel MLP {args.batch}x{args.model}, hidden {args.hidden} over 4 devices "
          f"(bf16; all-reduce of {args.batch * args.model * 2} bytes per device)")
    print("4 CPU devices: " + ("MATCHED" if "MATCHED" in cpu else "MISMATCH"))
    print("| link GB/s | step ms (slowest chip) | links | waiting | matched |")
    print("|---:|---:|---:|---:|---|")
    for gbps in BANDWIDTHS_GBPS:
        out = run(args, module, "--target", "systolic", "--config", "tpu-v4-mxu",
                  "--set", f"link.bandwidth_gbps={gbps}", "--set", "link.latency_ns=1000")
        chips = re.findall(r"device \d+: simulated ([0-9.e+-]+) ms \(links ([0-9.e+-]+) %, "
                           r"waiting for other chips ([0-9.e+-]+) %", out)
        if len(chips) != 4:
            sys.exit(f"expected 4 chips in:\n{out}")
        ms, links, waiting = max((float(a), float(b), float(c)) for a, b, c in chips)
        matched = "MATCHED" if "MATCHED" in out else "MISMATCH"
        print(f"| {gbps} | {ms:.4f} | {links:.1f} % | {waiting:.1f} % | {matched} |")


if __name__ == "__main__":
    main()
