#!/usr/bin/env python3
"""Writes interp/tests/xla_int4/NAME.{mlir,npz}: every integer elementwise op on i4 / ui4 /
i2 / ui2 values (all 16 bytes 0..15 converted down), each result read by a `convert` to the
8-bit type of its signedness, by a `convert` to i32, and by a further `add` then the 8-bit
convert; `out_*` computed by XLA:CPU through jaxlib (tools/xla_run.py). XLA computes 4-bit
ops in 8 bits and lets an 8-bit convert read the unwrapped value; 2-bit ops stay 2-bit.
Two programs: the second operand `reverse(x)` and `x + 0` (so that 2-bit sums overflow).
Run by hand: /work/venv/bin/python interp/tests/gen_xla_int4.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from xla_run import save_case  # noqa: E402

OUT = os.path.join(HERE, "xla_int4")
TYPES = {"ui4": "ui8", "i4": "i8", "ui2": "ui8", "i2": "i8"}
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor", "shift_left",
          "shift_right_logical", "shift_right_arithmetic", "power", "divide", "remainder"]
UNARY = ["negate", "abs", "not", "popcnt", "count_leading_zeros", "sign"]


def ops_of(t, wide, second):
    v = f"tensor<16x{t}>"
    lines = [f"  %x_{t} = stablehlo.convert %arg0 : (tensor<16xui8>) -> {v}",
             f"  %z_{t} = stablehlo.constant dense<0> : {v}",
             f"  %o_{t} = stablehlo.constant dense<1> : {v}",
             second(t, v),
             f"  %e_{t} = stablehlo.compare EQ, %y_{t}, %z_{t} : ({v}, {v}) -> tensor<16xi1>",
             f"  %d_{t} = stablehlo.select %e_{t}, %o_{t}, %y_{t} : tensor<16xi1>, {v}"]
    outs = []
    for op in BINARY + UNARY:
        if t.startswith("u") and op in ("abs", "sign"):
            continue  # signed-only ops
        r = f"%{op}_{t}"
        if op in UNARY:
            lines.append(f"  {r} = stablehlo.{op} %x_{t} : {v}")
        else:
            rhs = f"%d_{t}" if op in ("divide", "remainder") else f"%y_{t}"
            lines.append(f"  {r} = stablehlo.{op} %x_{t}, {rhs} : {v}")
        for dst in (wide, "i32"):
            lines.append(f"  {r}_{dst} = stablehlo.convert {r} : ({v}) -> tensor<16x{dst}>")
            outs.append((f"{r}_{dst}", f"tensor<16x{dst}>"))
        lines.append(f"  {r}_ch = stablehlo.add {r}, %x_{t} : {v}")
        lines.append(f"  {r}_chw = stablehlo.convert {r}_ch : ({v}) -> tensor<16x{wide}>")
        outs.append((f"{r}_chw", f"tensor<16x{wide}>"))
    return lines, outs


def write(name, second):
    lines, outs = [], []
    for t, wide in TYPES.items():
        ls, os_ = ops_of(t, wide, second)
        lines += ls
        outs += os_
    sig = ", ".join(ty for _, ty in outs)
    text = (f"func.func @main(%arg0: tensor<16xui8>) -> ({sig}) {{\n" + "\n".join(lines) +
            f"\n  return {', '.join(v for v, _ in outs)} : {sig}\n}}\n")
    save_case(OUT, name, text, [np.arange(16, dtype=np.uint8)])


def main():
    os.makedirs(OUT, exist_ok=True)
    write("int4_ops_reversed", lambda t, v: f"  %y_{t} = stablehlo.reverse %x_{t}, dims = [0] : {v}")
    write("int4_ops_self", lambda t, v: f"  %y_{t} = stablehlo.add %x_{t}, %z_{t} : {v}")


if __name__ == "__main__":
    main()
