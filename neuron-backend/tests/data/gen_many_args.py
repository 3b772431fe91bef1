#!/usr/bin/env python3
"""Generates `many_args.mlir` / `many_args.npz` for the HLO oracle test: 1001 parameters and
1001 results, parameter i of shape (i % 4 + 1,) and result i = parameter i * parameter i.
Past 1000 the npz keys (`arg_1000`, `out_1000`) no longer sort as strings in index order
(`arg_1000` < `arg_101`), which the oracle tools (`tools/run_hlo_proto.py`,
`tools/check_trace.py`) once did: XLA then got parameter 1000 in slot 101 and refused the size,
as on probe round 17's RT-DETR training step (1225 arguments). Reference outputs: numpy.

Run: /work/venv/bin/python neuron-backend/tests/data/gen_many_args.py
"""
import os

import numpy as np

N = 1001
HERE = os.path.dirname(os.path.abspath(__file__))


def ty(i):
    return f"tensor<{i % 4 + 1}xf32>"


def main():
    args = ", ".join(f"%arg{i}: {ty(i)}" for i in range(N))
    res = ", ".join(ty(i) for i in range(N))
    lines = [f"func.func @main({args}) -> ({res}) {{"]
    for i in range(N):
        lines.append(f"  %r{i} = stablehlo.multiply %arg{i}, %arg{i} : {ty(i)}")
    lines.append("  return " + ", ".join(f"%r{i}" for i in range(N)) + " : " + res)
    lines.append("}")
    with open(os.path.join(HERE, "many_args.mlir"), "w") as f:
        f.write("\n".join(lines) + "\n")
    rng = np.random.default_rng(1001)
    xs = [rng.standard_normal(i % 4 + 1).astype(np.float32) for i in range(N)]
    d = {f"arg_{i:03d}": x for i, x in enumerate(xs)}
    d.update({f"out_{i:03d}": (x * x).astype(np.float32) for i, x in enumerate(xs)})
    np.savez_compressed(os.path.join(HERE, "many_args.npz"), **d)


if __name__ == "__main__":
    main()
