#!/usr/bin/env python3
"""Retarget from JAX in one script, cell by cell as in a notebook: a small transformer-style
block written in JAX is lowered, run on every target against JAX's own answer, compared,
reported (the report's HTML page is written next to the outputs) and swept over the
accelerator's array size and memory bandwidth.

    make python-example                      # builds, then runs this with the build's Python
    # or, after `pip install .[jax,pandas]`:  python3 examples/python_quickstart.py [OUT_DIR]

OUT_DIR (default: ./python-quickstart) receives report.html and sweep.csv.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import retarget

# %% A model in JAX: layer norm, then a two-layer MLP with GELU whose matmuls take bf16 operands
# and accumulate in f32 (as a TPU's matrix unit does), and a residual connection.

bf16 = jnp.bfloat16


def block(x, gamma, w1, w2):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    normed = (x - mean) * jax.lax.rsqrt(var + 1e-6) * gamma
    hidden = jnp.dot(normed.astype(bf16), w1, preferred_element_type=jnp.float32)
    return x + jnp.dot(jax.nn.gelu(hidden).astype(bf16), w2, preferred_element_type=jnp.float32)


rng = np.random.default_rng(0)
args = (rng.standard_normal((256, 256), np.float32),
        np.ones(256, np.float32),
        (rng.standard_normal((256, 1024), np.float32) / 16).astype(bf16),
        (rng.standard_normal((1024, 256), np.float32) / 32).astype(bf16))

# %% Lower it once; the module is what JAX hands to XLA.
module = retarget.load(block, *args)
print(module)

# %% Run it on every target and check each against JAX.
expected = np.asarray(jax.jit(block)(*args))
for target in retarget.targets():
    got, profile = module.run_with_profile(target, args)
    error = float(np.max(np.abs(got[0] - expected)))
    how = "host emulation" if target == "gpu" else f"wall {profile['wall_ms']:.2f} ms"
    print(f"{target:9s} max |error| vs JAX {error:.2e}   ({how})")

# %% The targets against the reference interpreter. The output is f32, but the matmuls' operands
# were rounded to bf16, and a target that computes GELU a few f32 ulps differently rounds some of
# them to the neighbouring bf16 value: the output is only as close as bf16 allows, and the
# comparison uses bf16's default tolerance for it (`retarget run --compare` does the same).
for target in ("cpu", "gpu", "systolic"):
    print(f"{target:9s}", module.compare(target).summary)

# %% The portability report: a dict (the JSON of `retarget report`), HTML in a notebook.
report = module.report(["cpu", "gpu", "systolic"])
print(report.table)
out_dir = sys.argv[1] if len(sys.argv) > 1 else "python-quickstart"
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "report.html"), "w") as f:
    f.write(report._repr_html_())
for target, cell in report["models"][0]["targets"].items():
    print(f"{target:9s} latency {cell['latency_ms']:.4f} ms ({cell['latency_source']})")

# %% What if the accelerator changed? A TPU v4-like matrix unit (bf16 native) swept over its array
# size and DRAM bandwidth, every point simulated: small arrays are compute-bound, large ones wait
# for memory.
rows = retarget.sweep(module, config="tpu-v4-mxu", array=["16x16", "32x32", "64x64", "128x128"],
                      dram_gbps=[10, 40], jobs=2)
if hasattr(rows, "to_csv"):  # a pandas DataFrame
    rows.to_csv(os.path.join(out_dir, "sweep.csv"), index=False)
    print(rows[["point", "array", "dram_gbps", "latency_ms", "latency_source",
                "utilization"]].to_string(index=False))
else:
    for row in rows:
        print(row["point"], row["latency_ms"], row["latency_source"])
print(f"wrote {out_dir}/report.html and the sweep above")
