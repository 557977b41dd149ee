#!/usr/bin/env python3
"""Writes the CPU kernel benchmark modules of bench/models/ from JAX (dev-only: needs jax/jaxlib).

Each is a shape where a CPU backend either streams memory or vectorizes math, written as JAX
lowers it before XLA's optimizations:

  tanh_chain_16m_f32.hlo     tanh(a * b + c) * 0.5 over 16M f32 elements (a transcendental in a
                             memory-bound elementwise chain: 256 MiB of traffic)
  gelu_erf_4m_f32.hlo        the exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), over 4M f32
  softmax_rows_f32.hlo       softmax over the last axis of f32[8192, 1024]
  log_softmax_rows_f32.hlo   log-softmax over the last axis of f32[8192, 1024]
  layer_norm_rows_f32.hlo    layer norm (mean, variance, scale, offset) of f32[8192, 1024]
  dot_1024_f32.hlo           f32[1024, 1024] x f32[1024, 1024]
  dot_1024_bf16.hlo          the same in bf16 (f32 accumulation, bf16 result)
  dlrm_train_step_f32.hlo    one SGD step of a small DLRM (8 embedding tables of 10,000 x 64,
                             bottom and top MLPs, pairwise dot interaction, logistic loss) at
                             batch 2,048: gathers, scatter-adds of the embedding gradients,
                             GEMMs and their transposes, elementwise backward chains

`python3 bench/xla_cpu_latency.py --all` runs them next to the corpus on XLA:CPU and Retarget.

Usage: python3 bench/gen_kernel_models.py [OUT_DIR]   (default: bench/models)
"""
import os
import sys

import jax
import jax.numpy as jnp


def f32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def tanh_chain():
    return jax.jit(lambda a, b, c: jnp.tanh(a * b + c) * 0.5).lower(
        f32(1 << 24), f32(1 << 24), f32(1 << 24))


def gelu_erf():
    return jax.jit(lambda x: jax.nn.gelu(x, approximate=False)).lower(f32(1 << 22))


def softmax_rows():
    return jax.jit(lambda x: jax.nn.softmax(x, axis=-1)).lower(f32(8192, 1024))


def log_softmax_rows():
    return jax.jit(lambda x: jax.nn.log_softmax(x, axis=-1)).lower(f32(8192, 1024))


def layer_norm_rows():
    def norm(x, scale, offset):
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(variance + 1e-6) * scale + offset

    return jax.jit(norm).lower(f32(8192, 1024), f32(1024), f32(1024))


def dot(dtype):
    operand = jax.ShapeDtypeStruct((1024, 1024), dtype)
    return jax.jit(jnp.matmul).lower(operand, operand)


def dlrm_train_step():
    tables, rows, width, batch, dense = 8, 10_000, 64, 2048, 13

    def mlp(layers, x, last_linear):
        for i, (w, b) in enumerate(layers):
            x = x @ w + b
            if not (last_linear and i == len(layers) - 1):
                x = jax.nn.relu(x)
        return x

    def loss(params, dense_x, ids, labels):
        bottom = mlp(params["bottom"], dense_x, last_linear=False)
        embedded = [params["tables"][t][ids[:, t]] for t in range(tables)]
        features = jnp.stack([bottom] + embedded, axis=1)              # [B, 9, 64]
        interactions = jnp.einsum("bif,bjf->bij", features, features)
        upper = jnp.triu_indices(tables + 1, k=1)
        top_in = jnp.concatenate([bottom, interactions[:, upper[0], upper[1]]], axis=1)
        logits = mlp(params["top"], top_in, last_linear=True)[:, 0]
        return jnp.mean(jnp.logaddexp(0.0, logits) - labels * logits)

    def step(params, dense_x, ids, labels):
        grads = jax.grad(loss)(params, dense_x, ids, labels)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    def layers(sizes):
        return [(f32(m, n), f32(n)) for m, n in zip(sizes[:-1], sizes[1:])]

    top_width = width + (tables + 1) * tables // 2
    params = {"bottom": layers([dense, 512, 256, width]),
              "top": layers([top_width, 512, 256, 1]),
              "tables": [f32(rows, width) for _ in range(tables)]}
    return jax.jit(step).lower(params, f32(batch, dense),
                               jax.ShapeDtypeStruct((batch, tables), jnp.int32), f32(batch))


MODELS = [
    ("tanh_chain_16m_f32", tanh_chain),
    ("gelu_erf_4m_f32", gelu_erf),
    ("softmax_rows_f32", softmax_rows),
    ("log_softmax_rows_f32", log_softmax_rows),
    ("layer_norm_rows_f32", layer_norm_rows),
    ("dot_1024_f32", lambda: dot(jnp.float32)),
    ("dot_1024_bf16", lambda: dot(jnp.bfloat16)),
    ("dlrm_train_step_f32", dlrm_train_step),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "models")
    for name, lower in MODELS:
        text = lower().compiler_ir("hlo").as_hlo_text()
        with open(os.path.join(out, name + ".hlo"), "w") as f:
            f.write(text)
        print("wrote", os.path.join(out, name + ".hlo"))


if __name__ == "__main__":
    main()
