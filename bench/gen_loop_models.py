#!/usr/bin/env python3
"""Writes the loop benchmark modules of bench/models/ from JAX (dev-only: needs jax/jaxlib).

  scan_2000_steps_f32.hlo   lax.scan of 2,000 small steps (a leaky integrator over a
                            precomputed input sequence, carry f32[32], one output per step)
  ode_rk4_1000_steps_f32.hlo  fixed-step RK4 solve of a damped 16-oscillator system over
                            1,000 steps in a fori_loop (the shape of a diffrax solve with a
                            constant step size)

The modules are HLO text as jax lowers them before XLA's optimizations (no XLA pass has run);
`python3 bench/xla_cpu_latency.py --modules bench/models/NAME.hlo` runs them on XLA:CPU and on
Retarget.

Usage: python3 bench/gen_loop_models.py [OUT_DIR]   (default: bench/models)
"""
import os
import sys

import jax
import jax.numpy as jnp


def scan_model():
    def step(carry, x):
        carry = 0.9 * carry + 0.1 * jnp.tanh(x)
        return carry, carry.sum()

    def run(xs, init):
        return jax.lax.scan(step, init, xs)

    return jax.jit(run).lower(jnp.zeros((2000, 32), jnp.float32), jnp.zeros((32,), jnp.float32))


def ode_model():
    k = jnp.linspace(0.5, 2.0, 16, dtype=jnp.float32)

    def f(y):
        x, v = y[:16], y[16:]
        return jnp.concatenate([v, -k * x - 0.05 * v])

    def rk4(i, y):
        h = jnp.float32(0.01)
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def run(y0):
        return jax.lax.fori_loop(0, 1000, rk4, y0)

    return jax.jit(run).lower(jnp.ones((32,), jnp.float32))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "models")
    for name, lowered in [("scan_2000_steps_f32", scan_model()), ("ode_rk4_1000_steps_f32", ode_model())]:
        text = lowered.compiler_ir("hlo").as_hlo_text()
        with open(os.path.join(out, name + ".hlo"), "w") as f:
            f.write(text)
        print(name, len(text), "bytes")


if __name__ == "__main__":
    main()
