#!/usr/bin/env python3
"""Generates the reference models under tests/data/models/ (dev-only; never run by `make test`).

For each small model defined below this script writes
    tests/data/models/<name>.hlo           the pre-optimization HLO text JAX lowers the model to
    tests/data/models/<name>.inputs.npz    arg0, arg1, ... (fixed numpy seed per model)
    tests/data/models/<name>.expected.npz  out0, out1, ... computed by a plain-numpy reference

The expected outputs come from a numpy re-implementation of each model, written from the
math (not from the HLO) and evaluated in float64, so that the C++ interpreter is checked against
something that shares no code with it or with XLA. JAX's own run is used only as a sanity check
of the numpy reference: the max difference is printed, and the script fails if it exceeds the
model's tolerance (the same tolerance the C++ test applies).

bf16 models: inputs are rounded to bf16 (stored as float32, exact); the reference rounds to bf16
only where the model stores a bf16 tensor that later computation depends on heavily (see each
reference), everything else in float64; results are stored as float32.

Output is byte-for-byte deterministic (fixed seeds, fixed zip timestamps), so rerunning the
script on an unchanged tree changes nothing. Usage:
    python3 scripts/gen_reference_models.py            # (re)write tests/data/models/
    python3 scripts/gen_reference_models.py --check    # exit 1 if the files are out of date
Requires: jax (tested with 0.10.2), numpy, ml_dtypes (installed with jax).
"""

import argparse
import io
import os
import sys
import zipfile

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

BF16 = ml_dtypes.bfloat16
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "models")

def to_bf16(a):
    """Rounds to bf16 (nearest even) and returns float64 values, for bf16 references."""
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(BF16).astype(np.float64)


def softmax64(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


# ---------------------------------------------------------------------------------------------
# Models: each returns (jax_fn, inputs, numpy_reference_fn, (rtol, atol)). The tolerance is
# mirrored in kModels of tests/models/reference_models_test.cc.
# ---------------------------------------------------------------------------------------------

def mlp():
    """Two dense layers: softmax(relu(x @ w1 + b1) @ w2 + b2), f32."""
    rng = np.random.default_rng(101)
    x = rng.standard_normal((4, 16), dtype=np.float32)
    w1 = (rng.standard_normal((16, 32)) / 4).astype(np.float32)
    b1 = (rng.standard_normal(32) / 4).astype(np.float32)
    w2 = (rng.standard_normal((32, 10)) / 4).astype(np.float32)
    b2 = (rng.standard_normal(10) / 4).astype(np.float32)

    def f(x, w1, b1, w2, b2):
        h = jax.nn.relu(jnp.dot(x, w1) + b1)
        return jax.nn.softmax(jnp.dot(h, w2) + b2, axis=-1)

    def ref(x, w1, b1, w2, b2):
        x, w1, b1, w2, b2 = (a.astype(np.float64) for a in (x, w1, b1, w2, b2))
        hidden = np.einsum("bi,ih->bh", x, w1) + b1
        hidden[hidden < 0] = 0.0
        logits = np.einsum("bh,ho->bo", hidden, w2) + b2
        return [softmax64(logits)]

    return f, [x, w1, b1, w2, b2], ref, (1e-5, 1e-6)


def conv_block():
    """3x3 conv (stride 1, SAME padding) + bias + relu + 2x2/2 max-pool, NHWC/HWIO, f32."""
    rng = np.random.default_rng(102)
    x = rng.standard_normal((2, 6, 6, 3), dtype=np.float32)
    w = (rng.standard_normal((3, 3, 3, 4)) / 3).astype(np.float32)
    b = (rng.standard_normal(4) / 4).astype(np.float32)

    def f(x, w, b):
        y = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y + b)
        return lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def ref(x, w, b):
        x, w, b = x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)
        n, height, width, _ = x.shape
        padded = np.zeros((n, height + 2, width + 2, x.shape[3]))
        padded[:, 1:-1, 1:-1, :] = x
        conv = np.zeros((n, height, width, w.shape[3]))
        for i in range(height):
            for j in range(width):
                patch = padded[:, i:i + 3, j:j + 3, :]  # [n, 3, 3, cin]
                conv[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
        act = np.maximum(conv + b, 0.0)
        pooled = act.reshape(n, height // 2, 2, width // 2, 2, -1).max(axis=(2, 4))
        return [pooled]

    return f, [x, w, b], ref, (1e-5, 1e-6)


def _attention_inputs(seed, dtype):
    rng = np.random.default_rng(seed)
    seq, model_dim = 8, 16
    x = rng.standard_normal((seq, model_dim)).astype(np.float32)
    ws = [(rng.standard_normal((model_dim, model_dim)) / 4).astype(np.float32) for _ in range(4)]
    arrays = [x] + ws
    if dtype == jnp.bfloat16:
        arrays = [a.astype(BF16) for a in arrays]
    return arrays


def _attention_fn(heads):
    def f(x, wq, wk, wv, wo):
        seq, model_dim = x.shape
        head_dim = model_dim // heads

        def split(t):  # [seq, model] -> [heads, seq, head_dim]
            return t.reshape(seq, heads, head_dim).transpose(1, 0, 2)

        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        scores = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(jnp.asarray(head_dim, x.dtype))
        probs = jax.nn.softmax(scores, axis=-1)
        context = jnp.einsum("hqk,hkd->hqd", probs, v).transpose(1, 0, 2).reshape(seq, model_dim)
        return context @ wo
    return f


def _attention_ref(heads, round_fn):
    """Multi-head self-attention; `round_fn` is applied where the model stores a tensor."""
    def ref(x, wq, wk, wv, wo):
        x, wq, wk, wv, wo = (np.asarray(a, dtype=np.float64) for a in (x, wq, wk, wv, wo))
        seq, model_dim = x.shape
        head_dim = model_dim // heads
        q_all, k_all, v_all = (round_fn(x @ w) for w in (wq, wk, wv))
        context = np.zeros((seq, model_dim))
        for h in range(heads):
            cols = slice(h * head_dim, (h + 1) * head_dim)
            q, k, v = q_all[:, cols], k_all[:, cols], v_all[:, cols]
            scores = round_fn(round_fn(q @ k.T) / np.sqrt(head_dim))
            probs = round_fn(softmax64(scores))
            context[:, cols] = round_fn(probs @ v)
        return [context @ wo]
    return ref


def attention_f32():
    """Two-head self-attention with q/k/v/o projections, f32."""
    return (_attention_fn(2), _attention_inputs(103, jnp.float32),
            _attention_ref(2, lambda a: a), (1e-5, 1e-5))


def attention_bf16():
    """The same attention in bf16 (every tensor bf16; XLA accumulates dots in f32)."""
    return (_attention_fn(2), _attention_inputs(104, jnp.bfloat16),
            _attention_ref(2, to_bf16), (3e-2, 3e-2))


def layer_norm():
    """Layer norm over the last axis with scale and offset, eps = 1e-5, f32."""
    rng = np.random.default_rng(105)
    x = (rng.standard_normal((6, 32)) * 3 + 1).astype(np.float32)
    gamma = rng.standard_normal(32).astype(np.float32)
    beta = rng.standard_normal(32).astype(np.float32)
    eps = 1e-5

    def f(x, gamma, beta):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * lax.rsqrt(var + eps) * gamma + beta

    def ref(x, gamma, beta):
        x = x.astype(np.float64)
        out = np.empty_like(x)
        for r, row in enumerate(x):  # per row, with the two-pass textbook formula
            mu = row.sum() / row.size
            sigma2 = ((row - mu) ** 2).sum() / row.size
            out[r] = (row - mu) / np.sqrt(sigma2 + eps) * gamma + beta
        return [out]

    return f, [x, gamma, beta], ref, (1e-5, 1e-5)


def while_loop():
    """h <- tanh(W h + b) while i < n, where the trip count n is an input (data-dependent)."""
    rng = np.random.default_rng(106)
    w = (rng.standard_normal((16, 16)) / 3).astype(np.float32)
    b = (rng.standard_normal(16) / 4).astype(np.float32)
    h0 = rng.standard_normal(16).astype(np.float32)
    n = np.int32(7)

    def f(w, b, h0, n):
        def cond(state):
            i, _ = state
            return i < n

        def body(state):
            i, h = state
            return i + 1, jnp.tanh(w @ h + b)

        steps, h = lax.while_loop(cond, body, (jnp.int32(0), h0))
        return h, steps

    def ref(w, b, h0, n):
        h = h0.astype(np.float64)
        for _ in range(int(n)):
            h = np.tanh(w.astype(np.float64) @ h + b)
        return [h, np.int32(n)]

    return f, [w, b, h0, n], ref, (1e-5, 1e-5)


def embedding_lookup():
    """Gather rows of an embedding table by id (repeated and boundary ids), then mean-pool."""
    rng = np.random.default_rng(107)
    table = rng.standard_normal((20, 8)).astype(np.float32)
    ids = np.array([[0, 19, 3], [7, 7, 12]], dtype=np.int32)

    def f(table, ids):
        rows = jnp.take(table, ids, axis=0)  # [2, 3, 8]
        return rows, jnp.mean(rows, axis=1)

    def ref(table, ids):
        rows = np.stack([np.stack([table[i] for i in seq]) for seq in ids]).astype(np.float64)
        return [rows, rows.sum(axis=1) / ids.shape[1]]

    return f, [table, ids], ref, (1e-6, 1e-6)


def argmax():
    """argmax over the last axis (a variadic value/index reduce) with ties, NaN, -inf and -0."""
    rng = np.random.default_rng(108)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    x[1, 2] = x[1, 5] = 9.0          # tie: the first index wins
    x[2, 4] = np.nan                 # NaN counts as the maximum (first NaN wins)
    x[2, 6] = np.nan
    x[3, :] = -np.inf                # all -inf: index 0
    x[4, :] = 0.0
    x[4, 0] = -0.0                   # -0 == +0: index 0 (first of equals)

    def f(x):
        return jnp.argmax(x, axis=-1).astype(jnp.int32)

    def ref(x):
        out = []
        for row in x.astype(np.float64):
            nan_at = [i for i, v in enumerate(row) if v != v]
            if nan_at:
                out.append(nan_at[0])
                continue
            best = 0
            for i, v in enumerate(row):
                if v > row[best]:
                    best = i
            out.append(best)
        return [np.array(out, dtype=np.int32)]

    return f, [x], ref, (0.0, 0.0)


def sort_pairs():
    """Ascending sort of values with a stable argsort, along the last axis (NaN sorts last)."""
    rng = np.random.default_rng(109)
    x = rng.standard_normal((3, 9)).astype(np.float32)
    x[0, 3] = x[0, 7] = 0.5          # equal keys keep their order (stable)
    x[1, 1] = np.inf
    x[1, 4] = -np.inf
    x[2, 5] = np.nan
    x[2, 0] = 0.0                    # +0 before -0 in the input: they compare equal, so a
    x[2, 8] = -0.0                   # stable sort keeps +0 first

    def f(x):
        order = jnp.argsort(x, axis=-1, stable=True).astype(jnp.int32)
        return jnp.sort(x, axis=-1), order

    def ref(x):
        keys = x.astype(np.float64)
        orders = []
        for row in keys:
            # Insertion sort by hand: NaN is greater than everything, equal keys stay in order.
            def greater(a, b):
                return (a != a and b == b) or a > b
            idx = list(range(len(row)))
            for i in range(1, len(idx)):
                j = i
                while j > 0 and greater(row[idx[j - 1]], row[idx[j]]):
                    idx[j - 1], idx[j] = idx[j], idx[j - 1]
                    j -= 1
            orders.append(idx)
        orders = np.array(orders, dtype=np.int32)
        return [np.take_along_axis(keys, orders, axis=-1), orders]

    return f, [x], ref, (0.0, 0.0)


def dynamic_slice_loop():
    """fori_loop summing dynamic slices of a window that slides by a data-dependent stride,
    writing each partial sum back with dynamic_update_slice; out-of-range starts are clamped."""
    rng = np.random.default_rng(110)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    stride = np.int32(3)

    def f(x, stride):
        def body(i, carry):
            acc, log = carry
            window = lax.dynamic_slice(x, (i * stride, 0), (3, 4))  # i=4 -> start 12, clamped to 9
            acc = acc + window
            log = lax.dynamic_update_slice(log, jnp.sum(window, axis=0)[None, :], (i, 0))
            return acc, log
        return lax.fori_loop(0, 5, body, (jnp.zeros((3, 4), x.dtype), jnp.zeros((5, 4), x.dtype)))

    def ref(x, stride):
        x = x.astype(np.float64)
        acc = np.zeros((3, 4))
        log = np.zeros((5, 4))
        for i in range(5):
            start = min(i * int(stride), x.shape[0] - 3)
            acc += x[start:start + 3]
            log[i] = x[start:start + 3].sum(axis=0)
        return [acc, log]

    return f, [x, stride], ref, (1e-6, 1e-6)


def cumsum():
    """Inclusive prefix sums along axis 1 of an f32 matrix."""
    rng = np.random.default_rng(111)
    x = rng.standard_normal((3, 10)).astype(np.float32)

    def f(x):
        return jnp.cumsum(x, axis=1)

    def ref(x):
        out = np.zeros(x.shape)
        for r in range(x.shape[0]):
            running = 0.0
            for c in range(x.shape[1]):
                running += float(x[r, c])
                out[r, c] = running
        return [out]

    return f, [x], ref, (1e-5, 1e-6)


def integer_and_overflow():
    """s32 wrap-around, truncating division, remainder sign, over-wide shifts, and f32 overflow
    to inf, log of 0 and negatives, saturating float->int convert (NaN -> 0), NaN in max/min."""
    i32 = np.iinfo(np.int32)
    a = np.array([7, -7, 7, -7, i32.max, i32.min, i32.min, 123456789, 0, -1], np.int32)
    b = np.array([2, 2, -2, -2, 2, -1, 3, 1000, 5, 33], np.int32)
    x = np.array([1e30, -1e30, 100.0, -0.0, 0.0, 3e9, -3e9, np.nan, 2.5, -2.5], np.float32)

    def f(a, b, x):
        shift = jnp.minimum(jnp.abs(b), 40)
        return (a * b, lax.div(a, b), lax.rem(a, b), lax.shift_right_arithmetic(a, shift),
                lax.shift_left(a, shift), x * x, jnp.exp(x), jnp.log(x), x.astype(jnp.int32),
                a.astype(jnp.float32) + x, jnp.maximum(x, 0.0), jnp.minimum(-x, 0.0))

    def wrap(v):  # two's complement s32 of a Python int
        return (v + 2**31) % 2**32 - 2**31

    def f32(v):  # round a float64 result to f32 (inf when beyond f32's range)
        with np.errstate(over="ignore"):
            return np.float32(v)

    def ref(a, b, x):
        a, b = [int(v) for v in a], [int(v) for v in b]
        x = [float(v) for v in x]
        product = [wrap(p * q) for p, q in zip(a, b)]
        quotient = [wrap((abs(p) // abs(q)) * (1 if (p < 0) == (q < 0) else -1))
                    for p, q in zip(a, b)]
        remainder = [wrap(p - q * ((abs(p) // abs(q)) * (1 if (p < 0) == (q < 0) else -1)))
                     for p, q in zip(a, b)]
        shifts = [min(abs(q), 40) for q in b]
        right = [p >> n if n < 32 else (-1 if p < 0 else 0) for p, n in zip(a, shifts)]
        left = [wrap(p << n) if n < 32 else 0 for p, n in zip(a, shifts)]
        square = [f32(v * v) for v in x]
        exp = [f32(np.inf if v > 709 else (np.exp(v) if v == v else np.nan)) for v in x]
        log = [np.nan if v != v or v < 0 else (-np.inf if v == 0 else f32(np.log(v))) for v in x]
        to_int = [0 if v != v else int(max(min(np.trunc(v), 2**31 - 1), -2**31)) for v in x]
        mixed = [f32(float(np.float32(p)) + v) for p, v in zip(a, x)]
        relu = [np.nan if v != v else max(v, 0.0) for v in x]
        negative_part = [np.nan if v != v else min(-v, 0.0) for v in x]
        ints = [np.array(v, np.int32) for v in (product, quotient, remainder, right, left)]
        floats = [np.array(v, np.float64) for v in (square, exp, log)]
        return ints + floats + [np.array(to_int, np.int32)] + [
            np.array(v, np.float64) for v in (mixed, relu, negative_part)]

    return f, [a, b, x], ref, (1e-6, 0.0)


def empty_shapes():
    """Zero-sized arrays: reductions over an empty axis give the init value, concatenating an
    empty array is the identity, elementwise ops on empty arrays give empty arrays."""
    rng = np.random.default_rng(112)
    empty = np.zeros((0, 4), dtype=np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)

    def f(empty, y):
        return (jnp.sum(empty, axis=0), jnp.max(empty, axis=0, initial=-jnp.inf),
                jnp.concatenate([empty, y], axis=0), jnp.exp(empty) * 2.0)

    def ref(empty, y):
        return [np.zeros(4), np.full(4, -np.inf), y.astype(np.float64), np.zeros((0, 4))]

    return f, [empty, y], ref, (0.0, 0.0)


MODELS = {
    "mlp": mlp,
    "conv_block": conv_block,
    "attention_f32": attention_f32,
    "attention_bf16": attention_bf16,
    "layer_norm": layer_norm,
    "while_loop": while_loop,
    "embedding_lookup": embedding_lookup,
    "argmax": argmax,
    "sort_pairs": sort_pairs,
    "dynamic_slice_loop": dynamic_slice_loop,
    "cumsum": cumsum,
    "integer_and_overflow": integer_and_overflow,
    "empty_shapes": empty_shapes,
}


# ---------------------------------------------------------------------------------------------
# Writing files deterministically.
# ---------------------------------------------------------------------------------------------

def npz_bytes(arrays):
    """An uncompressed .npz like np.savez, but with fixed zip timestamps (reproducible bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, array in arrays:
            entry = io.BytesIO()
            # np.asarray, not np.ascontiguousarray: the latter turns scalars into shape (1,).
            np.lib.format.write_array(entry, np.asarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, entry.getvalue())
    return buffer.getvalue()


def file_array(a):
    """How an array is stored: bf16 as float32 (exact), everything else as is."""
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype == BF16 else a


def max_abs_diff(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    same = (a == b) | both_nan  # also covers equal infinities
    with np.errstate(invalid="ignore"):  # inf - inf where `same` already decided
        diff = np.where(same, 0.0, np.abs(a - b))
    return float(np.max(diff)) if diff.size else 0.0


def within(expected, actual, rtol, atol):
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(actual, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: decided by the equality test
        ok = (e == a) | (np.isnan(e) & np.isnan(a)) | (np.abs(a - e) <= atol + rtol * np.abs(e))
    return bool(np.all(ok))


def build(name):
    """Returns {filename: bytes} for one model, after checking numpy against JAX."""
    fn, inputs, ref, (rtol, atol) = MODELS[name]()
    lowered = jax.jit(fn).lower(*inputs)
    hlo_text = lowered.as_text(dialect="hlo")
    if "{...}" in hlo_text:
        raise SystemExit(f"{name}: HLO has elided constants; pass large values as arguments")

    expected = ref(*[np.asarray(a) for a in inputs])
    jax_out = jax.tree_util.tree_leaves(jax.jit(fn)(*inputs))
    if len(jax_out) != len(expected):
        raise SystemExit(f"{name}: numpy gives {len(expected)} outputs, JAX {len(jax_out)}")

    out_arrays = []
    worst = 0.0
    for i, (mine, theirs) in enumerate(zip(expected, jax_out)):
        theirs = np.asarray(theirs)
        stored_dtype = np.float32 if theirs.dtype == BF16 else theirs.dtype
        mine = np.asarray(mine).astype(stored_dtype)
        if mine.shape != theirs.shape:
            raise SystemExit(f"{name}: out{i} shape {mine.shape} vs JAX {theirs.shape}")
        worst = max(worst, max_abs_diff(mine, theirs))
        if not within(mine, theirs, rtol, atol):
            raise SystemExit(f"{name}: out{i} numpy and JAX disagree beyond rtol={rtol} "
                             f"atol={atol} (max |diff| {max_abs_diff(mine, theirs):.3g})")
        out_arrays.append((f"out{i}", mine))

    in_arrays = [(f"arg{i}", file_array(a)) for i, a in enumerate(inputs)]
    print(f"{name:20s} max |numpy - jax| = {worst:.3g}  (tolerance rtol={rtol} atol={atol})")
    return {
        f"{name}.hlo": hlo_text.encode(),
        f"{name}.inputs.npz": npz_bytes(in_arrays),
        f"{name}.expected.npz": npz_bytes(out_arrays),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out-dir", default=OUT_DIR)
    parser.add_argument("models", nargs="*", help="subset of models (default: all)")
    args = parser.parse_args()

    jax.config.update("jax_platforms", "cpu")
    names = args.models or list(MODELS)
    os.makedirs(args.out_dir, exist_ok=True)
    stale = []
    for name in names:
        for filename, content in build(name).items():
            path = os.path.join(args.out_dir, filename)
            old = open(path, "rb").read() if os.path.exists(path) else None
            if old == content:
                continue
            if args.check:
                stale.append(filename)
            else:
                with open(path, "wb") as out:
                    out.write(content)
                print(f"  wrote {path}")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
