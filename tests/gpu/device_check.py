#!/usr/bin/env python3
"""Helpers for device_check.sh (python3 + numpy; jax optional). Subcommands:

  compare EXPECTED.npz ACTUAL.npz [--rtol R] [--atol A]   MATCHED / MISMATCH (worst element); exit 1 on mismatch
  matmuls ARTIFACT.rtgpu        one line per cublaslt_matmul step: "m n k batch dtype tf32"
  inputs DESCRIBE.txt OUT.npz   random inputs (seed 1) for the parameters `retarget-gpu-run --describe` lists
  jax MODULE.hlo.pb INPUTS.npz REPEAT [EXPECTED.npz]
                                XLA's latency for the same module through JAX on the default device:
                                prints "jax median_ms min_ms (platform, max|diff|)" or "jax n/a (reason)"
  table ROWS.tsv                the summary table
"""
import json
import struct
import sys
import time

import numpy as np


def compare(expected_path, actual_path, rtol, atol):
    exp, act = np.load(expected_path), np.load(actual_path)
    worst = None
    for name in exp.files:
        if name not in act.files:
            print(f"MISMATCH: {actual_path} lacks {name}")
            return 1
        e, a = exp[name].astype(np.float64), act[name].astype(np.float64)
        if e.shape != a.shape:
            print(f"MISMATCH: {name} shape {a.shape}, expected {e.shape}")
            return 1
        if e.size == 0:
            continue
        err = np.abs(a - e) - (atol + rtol * np.abs(e))
        bad = np.isnan(a) != np.isnan(e)
        i = int(np.argmax(np.where(bad, np.inf, err)))
        if bad.flat[i] or err.flat[i] > 0:
            idx = tuple(int(j) for j in np.unravel_index(i, e.shape))
            worst = f"{name}{list(idx)}: {float(a[idx]):.9g} vs expected {float(e[idx]):.9g}"
            break
    if worst:
        print(f"MISMATCH (worst element {worst})")
        return 1
    print(f"MATCHED ({len(exp.files)} arrays)")
    return 0


def manifest(path):
    data = open(path, "rb").read()
    if data[:8] != b"RTGPU\0\r\n":
        raise SystemExit(f"{path}: not an artifact")
    version, count, total = struct.unpack_from("<IIQ", data, 8)
    if version != 2:
        raise SystemExit(f"{path}: artifact format version {version}; this script reads version 2")
    at = 24
    for _ in range(count):
        (n,) = struct.unpack_from("<H", data, at)
        name = data[at + 2:at + 2 + n].decode()
        offset, size, _crc = struct.unpack_from("<QQI", data, at + 2 + n)
        at += 2 + n + 20
        if name == "manifest":
            return json.loads(data[offset:offset + size])
    raise SystemExit(f"{path}: no manifest")


def matmuls(path):
    m = manifest(path)
    for step in m["steps"] + [s for p in m.get("programs", []) for s in p["steps"]]:
        if step["kind"] == "cublaslt_matmul":
            print(step["m"], step["n"], step["k"], step["batch"], step["dtype"], int(step["allow_tf32"]))
    return 0


NP_TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32, "s8": np.int8,
            "u8": np.uint8, "s16": np.int16, "u16": np.uint16, "s32": np.int32, "u32": np.uint32,
            "s64": np.int64, "u64": np.uint64, "pred": np.bool_}


def inputs(describe_path, out_path):
    rng = np.random.default_rng(1)
    arrays = {}
    for line in open(describe_path):
        if not line.startswith("parameter "):
            continue
        _, name, typed = line.split()
        dtype, dims = typed.split("[", 1)
        shape = tuple(int(d) for d in dims.rstrip("]").split(",") if d)
        t = NP_TYPES[dtype]
        if np.issubdtype(t, np.floating):
            arrays[name] = rng.uniform(-1, 1, shape).astype(t)
        elif t is np.bool_:
            arrays[name] = rng.integers(0, 2, shape).astype(t)
        else:
            arrays[name] = rng.integers(0, 8, shape).astype(t)
    np.savez(out_path, **arrays)
    return 0


def jax_latency(proto_path, inputs_path, repeat, expected_path=None):
    """XLA itself on the same module: jaxlib has no HLO text parser, so the build machine writes
    the module as an HloModuleProto (`retarget print --format proto`), which XlaComputation takes."""
    try:
        import jax
        from jax._src.lib import xla_client as xc
    except Exception as e:  # noqa: BLE001 - any import failure means "no JAX here"
        print(f"jax n/a (import: {e.__class__.__name__})")
        return 0
    try:
        proto = open(proto_path, "rb").read()
        mlir = xc._xla.mlir.xla_computation_to_mlir_module(xc.XlaComputation(proto))
        device = jax.devices()[0]
        client = device.client
        if hasattr(client, "compile_and_load"):
            exe = client.compile_and_load(mlir, xc.DeviceList((device,)), xc.CompileOptions())
        else:
            exe = client.compile(mlir, xc.CompileOptions())
        z = np.load(inputs_path)
        names = sorted(z.files, key=lambda s: [int(p) if p.isdigit() else p for p in s[3:].split(".")])
        args = [jax.device_put(z[n], device) for n in names]

        def run():
            try:
                out = exe.execute_sharded(args)
            except TypeError:  # older jaxlib: one list per device
                out = exe.execute_sharded([[a] for a in args])
            arrays = [a[0] for a in out.disassemble_into_single_device_arrays()]
            jax.block_until_ready(arrays)
            return arrays

        for _ in range(3):
            outputs = run()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        check = ""
        if expected_path:
            e = np.load(expected_path)
            diffs = [float(np.max(np.abs(np.asarray(o, np.float64) - e[f"out{i}"]))) if e[f"out{i}"].size else 0.0
                     for i, o in enumerate(outputs) if f"out{i}" in e.files]
            check = f", max|diff| vs expected {max(diffs, default=0.0):.3g}"
        print(f"jax {np.median(times):.4f} {min(times):.4f} ({device.platform}{check})")
    except Exception as e:  # noqa: BLE001 - jaxlib's private API moves between versions
        print(f"jax n/a ({e.__class__.__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})")
    return 0


def table(rows_path):
    rows = [line.rstrip("\n").split("\t") for line in open(rows_path) if line.strip()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "compare":
        rtol = float(args[args.index("--rtol") + 1]) if "--rtol" in args else 1e-4
        atol = float(args[args.index("--atol") + 1]) if "--atol" in args else 1e-5
        return compare(args[0], args[1], rtol, atol)
    if cmd == "matmuls":
        return matmuls(args[0])
    if cmd == "inputs":
        return inputs(args[0], args[1])
    if cmd == "jax":
        return jax_latency(args[0], args[1], int(args[2]), args[3] if len(args) > 3 else None)
    if cmd == "table":
        return table(args[0])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
