#!/usr/bin/env python3
"""Generates the special-function fixture of the HLO oracle test (`special_fns.mlir` and
`special_fns.npz`): jax lowers these functions to CHLO ops (lgamma, digamma, erf_inv,
next_after, erfc, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, top_k) that the HLO
emitter decomposes; jax's own results on XLA:CPU are the reference outputs.

Run: /work/venv/bin/python neuron-backend/tests/data/gen_special.py
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy import special as sp


def f(pos, neg, unit, big, x, y, m):
    return (
        lax.lgamma(pos), lax.lgamma(neg), lax.digamma(pos), lax.digamma(neg),
        lax.erf_inv(unit), lax.erfc(unit), sp.erfinv(unit * 0.5),
        jnp.arcsin(unit), jnp.arccos(unit), jnp.arctan(big),
        jnp.sinh(unit), jnp.cosh(unit), jnp.arcsinh(big), jnp.arccosh(big + 2.0),
        jnp.arctanh(unit),
        lax.nextafter(x, y),
        *lax.top_k(m, 3),
    )


def main():
    rng = np.random.default_rng(7)
    pos = rng.uniform(0.05, 6.0, (4, 8)).astype(np.float32)
    neg = (rng.uniform(-4.0, 0.0, (4, 8)) + 0.37).astype(np.float32)
    unit = rng.uniform(-0.95, 0.95, (4, 8)).astype(np.float32)
    big = rng.uniform(-20.0, 20.0, (4, 8)).astype(np.float32)
    x = rng.uniform(-2, 2, (16,)).astype(np.float32)
    y = rng.uniform(-2, 2, (16,)).astype(np.float32)
    x[:3] = [0.0, 0.0, 1.0]
    y[:3] = [1.0, -1.0, 1.0]
    m = rng.normal(size=(3, 10)).astype(np.float32)
    args = (pos, neg, unit, big, x, y, m)
    text = jax.jit(f).lower(*args).as_text()
    outs = jax.jit(f)(*args)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "special_fns.mlir"), "w") as fh:
        fh.write(text)
    data = {f"arg_{i:03d}": a for i, a in enumerate(args)}
    data.update({f"out_{i:03d}": np.asarray(o) for i, o in enumerate(outs)})
    np.savez(os.path.join(here, "special_fns.npz"), **data)


if __name__ == "__main__":
    main()
