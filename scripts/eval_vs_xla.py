#!/usr/bin/env python3
"""Differential check of the reference evaluator against XLA:CPU (dev-only; needs jax).

Lowers small jax functions (every elementwise op on f32/bf16/f16/f64 and on six integer types
with edge values: ±0, ±inf, NaN, ties, denormals, INT_MIN, shifts >= width; converts;
reduce-precision; and the data-movement / control ops: transpose, pad with negative and
interior padding, strided and reversed slices, broadcast, concatenate, dynamic-slice and
dynamic-update-slice with out-of-range starts, gathers incl. batched ones, top-k, while,
switch with an out-of-range index) to HLO text, runs each through
`retarget run --target interp`, and compares the result with jax's bit for bit (transcendentals
within 1e-5 relative, 1e-2 for 16-bit floats).

Known, intended differences (ir.h): XLA:CPU flushes denormals to zero and contracts a*b+c into
FMA; Retarget does neither. Such mismatches are reported as "known" and do not fail the run.

Usage: scripts/eval_vs_xla.py [--bin build/bin/retarget] [--workdir /tmp/eval_vs_xla]
"""
import argparse
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--bin", default="build/bin/retarget")
parser.add_argument("--workdir", default="/tmp/eval_vs_xla")
options = parser.parse_args()
BIN = os.path.abspath(options.bin)
def specials(n, dtype):
    x = rng.standard_normal(n).astype(np.float32) * 3
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, 2.5, 1e-40, 3.4e38, -1e-8], np.float32)
    x[:len(sp)] = sp
    return x.astype(dtype)
def ints(n, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    sp = np.array([0, 1, -1 if info.min < 0 else 2, info.min, info.max, 7, 31, 32], dtype=np.int64)
    x[:len(sp)] = sp.astype(dtype)
    return x
cases = []
F = lambda name, fn, *args: cases.append((name, fn, args))
for dt in [np.float32, jnp.bfloat16, np.float16, np.float64]:
    a, b = specials(64, dt), specials(64, dt)[::-1].copy()
    for nm, fn in [("add", lax.add), ("sub", lax.sub), ("mul", lax.mul), ("div", lax.div), ("max", lax.max), ("min", lax.min),
                   ("rem", lax.rem), ("pow", lax.pow), ("atan2", lax.atan2)]:
        F(f"{nm}_{np.dtype(dt).name}", fn, a, b)
    for nm, fn in [("neg", lax.neg), ("abs", lax.abs), ("sign", lax.sign), ("floor", lax.floor), ("ceil", lax.ceil),
                   ("rne", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)), ("afz", lax.round),
                   ("sqrt", lax.sqrt), ("rsqrt", lax.rsqrt), ("exp", lax.exp), ("log", lax.log), ("tanh", lax.tanh),
                   ("logistic", lax.logistic), ("is_finite", lax.is_finite), ("cbrt", lax.cbrt), ("expm1", lax.expm1), ("log1p", lax.log1p),
                   ("to_s32", lambda x: lax.convert_element_type(x, jnp.int32)), ("to_u8", lambda x: lax.convert_element_type(x, jnp.uint8)),
                   ("to_s64", lambda x: lax.convert_element_type(x, jnp.int64)), ("to_bf16", lambda x: lax.convert_element_type(x, jnp.bfloat16)),
                   ("to_f16", lambda x: lax.convert_element_type(x, jnp.float16)), ("to_pred", lambda x: lax.convert_element_type(x, jnp.bool_)),
                   ("rp_e5m2", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2)),
                   ("rp_e4m3", lambda x: lax.reduce_precision(x, exponent_bits=4, mantissa_bits=3)),
                   ("lt", lambda x: x < x[::-1]),
                   ("clamp", lambda x: lax.clamp(x[:1][0], x, x[2]))]:
        F(f"{nm}_{np.dtype(dt).name}", fn, a)
for dt in [np.int8, np.int32, np.uint8, np.uint32, np.int64, np.uint16]:
    a, b = ints(64, dt), ints(64, dt)[::-1].copy()
    for nm, fn in [("add", lax.add), ("mul", lax.mul), ("div", lax.div), ("rem", lax.rem), ("max", lax.max),
                   ("shl", lax.shift_left), ("sra", lax.shift_right_arithmetic), ("srl", lax.shift_right_logical),
                   ("and", lax.bitwise_and), ("xor", lax.bitwise_xor), ("lt", lax.lt)]:
        F(f"{nm}_{np.dtype(dt).name}", fn, a, b)
    for nm, fn in [("neg", lax.neg), ("abs", lax.abs), ("popcnt", lax.population_count), ("clz", lax.clz), ("not", lax.bitwise_not),
                   ("to_f32", lambda x: lax.convert_element_type(x, jnp.float32)), ("to_s8", lambda x: lax.convert_element_type(x, jnp.int8)),
                   ("to_bf16", lambda x: lax.convert_element_type(x, jnp.bfloat16)), ("sign", lax.sign)]:
        F(f"{nm}_{np.dtype(dt).name}", fn, a)
x = rng.standard_normal((4, 5, 6)).astype(np.float32)
F("transpose", lambda x: jnp.transpose(x, (2, 0, 1)), x)
F("pad", lambda x: lax.pad(x, np.float32(-1), [(1, -2, 1), (-1, 2, 0), (0, 0, 2)]), x)
F("slice", lambda x: x[1:4:2, ::-1, 2:6:3], x)
F("bcast", lambda x: jnp.broadcast_to(x[:, None, :, :], (4, 3, 5, 6)), x)
F("concat", lambda x: jnp.concatenate([x, x[:, :2] * 2], axis=1), x)
F("dslice", lambda x, i: lax.dynamic_slice(x, (i, i - 3, np.int32(4)), (2, 3, 3)), x, np.int32(3))
F("dus", lambda x, i: lax.dynamic_update_slice(x, jnp.ones((2, 2, 2), np.float32), (i, -i, i)), x, np.int32(3))
F("take", lambda x, i: jnp.take(x, i, axis=1, mode="clip"), x, np.array([[0, 4], [7, -3]], np.int32))
F("gather2", lambda x, i: x[i[:, 0], :, i[:, 1]], x, np.array([[0, 4], [3, 1], [2, 5]], np.int32))
F("batched_gather", lambda x, i: jax.vmap(lambda r, j: r[j])(x, i), x, np.array([[1, 2], [0, 0], [4, 4], [3, 1]], np.int32))
F("topk", lambda x: lax.top_k(x, 3), specials(40, np.float32).reshape(4, 10))
F("rev", lambda x: lax.rev(x, (0, 2)), x)
F("iota_select", lambda x: jnp.where(jnp.arange(6) % 2 == 0, x, -x), x)
F("while", lambda x: lax.fori_loop(0, 7, lambda i, c: c * 1.5 + i, x), x)
F("cond", lambda x, i: lax.switch(i, [lambda y: y + 1, lambda y: y * 2, lambda y: -y], x), x, np.int32(5))
F("cumsum_scan", lambda x: jnp.cumsum(x, axis=1), x)
ok = bad = 0
os.makedirs(options.workdir, exist_ok=True)
os.chdir(options.workdir)
os.makedirs("cases", exist_ok=True)
known = 0
for name, fn, args in cases:
    try:
        lowered = jax.jit(fn).lower(*args)
        text = lowered.as_text(dialect="hlo")
    except Exception as e:
        print("SKIP", name, str(e)[:100]); continue
    want = jax.jit(fn)(*args)
    want = jax.tree_util.tree_leaves(want)
    path = f"cases/{name}.hlo"
    open(path, "w").write(text)
    np.savez(f"cases/{name}_in.npz", **{f"arg{i}": (np.asarray(a, np.float32) if np.asarray(a).dtype == jnp.bfloat16 else np.asarray(a)) for i, a in enumerate(args)})
    r = subprocess.run([BIN, "run", path, "--target", "interp", "--inputs", f"cases/{name}_in.npz", "--output", f"cases/{name}_out.npz", "--force"], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL", name, (r.stderr or r.stdout)[-300:]); bad += 1; continue
    got = np.load(f"cases/{name}_out.npz")
    for k, w in enumerate(want):
        w = np.asarray(w)
        g = got[f"out{k}"]
        wf = w.astype(np.float64) if w.dtype != np.bool_ else w.astype(np.float64)
        gf = g.astype(np.float64)
        if wf.shape != gf.shape:
            print("SHAPE", name, wf.shape, gf.shape); bad += 1; continue
        transc = any(t in name for t in ["exp", "log", "tanh", "logistic", "cbrt", "pow", "atan2", "sqrt", "rsqrt"])
        same = (np.isnan(wf) == np.isnan(gf)) & ((wf == gf) | np.isnan(wf))
        same &= (np.signbit(wf) == np.signbit(gf)) | np.isnan(wf) | transc
        if transc:
            tol = 1e-2 if ("bfloat16" in name or "float16" in name) else 1e-5
            same |= np.abs(wf - gf) <= tol * np.maximum(1, np.abs(wf))
        # XLA:CPU flushes denormals (inputs and results) to zero; Retarget keeps them.
        tiny = lambda v: (v != 0) & (np.abs(v) < np.finfo(np.float32).tiny) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
        denormal = tiny(gf) | tiny(wf)
        for a in args:
            a = np.asarray(a)
            if a.shape == wf.shape and a.dtype.kind in "fV":
                denormal |= tiny(np.asarray(a, np.float64))
        if name == "while":  # XLA fuses c * 1.5 + i into an FMA
            same |= np.abs(wf - gf) <= 1e-6 * np.abs(wf)
        if not same.all() and (same | denormal).all():
            known += 1
            continue
        if not same.all():
            idx = np.argwhere(~same.reshape(-1))[:4].ravel()
            inp = [np.asarray(a).reshape(-1)[idx] if np.asarray(a).size == wf.size else None for a in args]
            print("MISMATCH", name, "out", k, "idx", idx, "want", wf.reshape(-1)[idx], "got", gf.reshape(-1)[idx], "in", inp); bad += 1
        else:
            ok += 1
print(f"matched {ok}, known differences (denormals) {known}, mismatched {bad}")
sys.exit(1 if bad else 0)
