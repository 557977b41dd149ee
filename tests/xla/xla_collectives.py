#!/usr/bin/env python3
"""XLA:CPU as the oracle for multi-device runs: sharded JAX programs that use every collective
run on XLA:CPU with several host devices (--xla_force_host_platform_device_count) and on
Retarget's interpreter (`retarget run --devices N`), and every device's outputs are compared.
Nothing expected is stored: XLA computes it at test time.

  tests/xla/xla_collectives.py --retarget build/bin/retarget --work DIR

Per program:
  1. jax.jit(shard_map(f)) is compiled for a mesh of host devices; the module XLA runs (after
     SPMD partitioning and XLA:CPU's passes: one program per device, with its all-reduce,
     all-gather, reduce-scatter, all-to-all, collective-permute and partition-id) is written as
     text, the per-device shards of the inputs and outputs as .npz with a leading device
     dimension (device d = partition d: the mesh lists the devices in order);
  2. `retarget run M.hlo --target T --inputs in.npz --output ours.npz` for T = interp, cpu, gpu
     (the artifact emulated on the host, its collectives NCCL steps) and systolic (a simulated
     chip per device)
     (the device count comes from the module's num_partitions);
  3. integers compare exactly; floats within rtol 1e-6 (an all-reduce may add in another order).
Exit status 1 when any program did not match or did not run.
"""

import argparse
import os
import subprocess
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402  (XLA_FLAGS must be set first)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import shard_map  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402


def one_axis(x, n):
    """Every collective over one mesh axis of n devices."""
    ax = "x"
    ring = [(i, (i + 1) % n) for i in range(n)]
    partial = [(0, n - 1), (n - 1, 0)]
    return (
        jax.lax.psum(x, ax),
        jax.lax.pmax(x, ax),
        jax.lax.pmin(x, ax),
        jax.lax.all_gather(x, ax, axis=0, tiled=True),
        jax.lax.all_gather(x, ax, axis=1, tiled=True),
        jax.lax.psum_scatter(x, ax, scatter_dimension=0, tiled=True),
        jax.lax.all_to_all(x, ax, 0, 1, tiled=True),
        jax.lax.ppermute(x, ax, ring),
        jax.lax.ppermute(x, ax, partial),
        jnp.full((1,), jax.lax.axis_index(ax), jnp.int32),
        jax.lax.psum(x, ax, axis_index_groups=[[i, i + 1] for i in range(0, n, 2)]),
    )


def two_axes(x):
    """Collectives over one axis of a 2 x 4 mesh: several groups, strided groups."""
    return (
        jax.lax.psum(x, "b"),
        jax.lax.psum(x, "a"),
        jax.lax.all_gather(x, "a", axis=0, tiled=True),
        jax.lax.ppermute(x, "b", [(i, (i + 1) % 4) for i in range(4)]),
        jax.lax.all_to_all(x, "b", 1, 1, tiled=True),
        jnp.full((1,), 10 * jax.lax.axis_index("a") + jax.lax.axis_index("b"), jnp.int32),
    )


def in_a_loop(x):
    """A psum in every trip of a loop, and a ppermute carried around it."""
    def body(i, carry):
        s, r = carry
        s = jax.lax.psum(s, "x") * 0.5
        r = jax.lax.ppermute(r, "x", [(k, (k + 1) % 4) for k in range(4)])
        return s, r
    return jax.lax.fori_loop(0, 5, body, (x, x))


def programs():
    devices = np.array(jax.devices()[:8])
    mesh4 = Mesh(devices[:4], ("x",))
    mesh8 = Mesh(devices.reshape(2, 4), ("a", "b"))
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal((16, 8)).astype(np.float32)
    s32 = rng.integers(-100, 100, (16, 8)).astype(np.int32)
    yield ("one_axis_f32", mesh4, lambda x: one_axis(x, 4), (P("x"),), f32)
    yield ("one_axis_s32", mesh4, lambda x: one_axis(x, 4), (P("x"),), s32)
    yield ("two_axes_f32", mesh8, two_axes, (P(("a", "b")),), f32)
    yield ("loop_f32", mesh4, in_a_loop, (P("x"),), f32)


def shards(array):
    """The per-device blocks of a jax.Array, stacked in device order."""
    by_device = sorted(array.addressable_shards, key=lambda s: s.device.id)
    return np.stack([np.asarray(s.data) for s in by_device])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--retarget", required=True)
    parser.add_argument("--work", required=True, help="directory for modules and arrays")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for name, mesh, fn, in_specs, value in programs():
        n = mesh.devices.size
        f = jax.jit(shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=P(mesh.axis_names),
                              check_vma=False))
        x = jax.device_put(value, jax.sharding.NamedSharding(mesh, in_specs[0]))
        compiled = f.lower(x).compile()
        outputs = jax.tree_util.tree_leaves(f(x))
        module = os.path.join(args.work, name + ".hlo")
        with open(module, "w") as out:
            out.write(compiled.as_text())
        inputs = os.path.join(args.work, name + ".in.npz")
        np.savez(inputs, arg0=shards(x))
        for target in ("interp", "cpu", "gpu", "systolic"):
            failures += not check(args, name, target, module, inputs, outputs, n)
    return 1 if failures else 0


def check(args, name, target, module, inputs, outputs, n):
    """Runs `module` on `target` and compares with XLA's per-device outputs."""
    ours = os.path.join(args.work, f"{name}.{target}.npz")
    run = subprocess.run([args.retarget, "run", module, "--target", target, "--inputs",
                          inputs, "--output", ours, "--force"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{name} on {target}: retarget failed:\n{run.stdout}{run.stderr}")
        return False
    got = np.load(ours)
    bad = []
    for k, expected in enumerate(outputs):
        want = shards(expected)
        have = got[f"out{k}"]
        if have.shape != want.shape:
            bad.append(f"out{k}: shape {have.shape}, XLA {want.shape}")
        elif np.issubdtype(want.dtype, np.integer):
            if not np.array_equal(have, want):
                bad.append(f"out{k}: integers differ at {np.argwhere(have != want)[0]}")
        elif not np.allclose(have, want, rtol=1e-6, atol=1e-6):
            worst = np.abs(have - want).max()
            bad.append(f"out{k}: max |difference| {worst}")
    if len(got.files) != len(outputs):
        bad.append(f"{len(got.files)} outputs, XLA {len(outputs)}")
    status = "MATCHED" if not bad else "MISMATCH: " + "; ".join(bad)
    print(f"{name} on {target}: {n} devices, {len(outputs)} outputs: {status}")
    return not bad


if __name__ == "__main__":
    sys.exit(main())
