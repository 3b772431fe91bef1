#!/usr/bin/env python3
"""Writes interp/tests/xla_fma/NAME.{mlir,npz}: small programs whose f32/f64 results XLA:CPU's
fused multiply-adds (LLVM contracting `a*b + c` into one rounding) change, and the
neighbouring cases it leaves separately rounded, with `out_*` computed by XLA:CPU through
jaxlib (tools/xla_run.py). Run by hand: /work/venv/bin/python interp/tests/gen_xla_fma.py
"""
import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from xla_run import save_case  # noqa: E402

OUT = os.path.join(HERE, "xla_fma")
N = 2048


def write(name, args, body, outs):
    """args: [(name, type, array)]; outs: [(value, type)]."""
    sig = ", ".join(f"%{n}: {t}" for n, t, _ in args)
    types = ", ".join(t for _, t in outs)
    text = (f"func.func @main({sig}) -> ({types}) {{{body}\n"
            f"  return {', '.join(v for v, _ in outs)} : {types}\n}}\n")
    arrays = [a for _, _, a in args]
    save_case(OUT, name, text, arrays)


def uniform(rng, shape, dt):
    return rng.uniform(-1, 1, shape).astype(dt)


def elementwise(dt, np_t, seed):
    """The add / subtract forms of a product XLA:CPU fuses (f32, f64) or not (f16, bf16)."""
    rng = np.random.default_rng(seed)
    t = f"tensor<{N}x{dt}>"
    args = [(n, t, uniform(rng, N, np_t)) for n in "abcd"]
    body = f"""
  %k = stablehlo.constant dense<0.1> : {t}
  %m = stablehlo.multiply %a, %b : {t}
  %r0 = stablehlo.add %m, %c : {t}
  %m1 = stablehlo.multiply %a, %b : {t}
  %r1 = stablehlo.add %c, %m1 : {t}
  %m2 = stablehlo.multiply %a, %b : {t}
  %r2 = stablehlo.subtract %m2, %c : {t}
  %m3 = stablehlo.multiply %a, %b : {t}
  %r3 = stablehlo.subtract %c, %m3 : {t}
  %m4 = stablehlo.multiply %a, %b : {t}
  %n4 = stablehlo.negate %m4 : {t}
  %r4 = stablehlo.add %n4, %c : {t}
  %m5 = stablehlo.multiply %a, %k : {t}
  %r5 = stablehlo.add %m5, %c : {t}
  %m6 = stablehlo.multiply %a, %b : {t}
  %p6 = stablehlo.multiply %c, %d : {t}
  %r6 = stablehlo.add %m6, %p6 : {t}
  %m7 = stablehlo.multiply %a, %b : {t}
  %p7 = stablehlo.multiply %c, %d : {t}
  %r7 = stablehlo.subtract %m7, %p7 : {t}"""
    write(f"{dt}_forms", args, body, [(f"%r{i}", t) for i in range(8)])


def uses():
    """Where the product's other users decide whether XLA fuses it into the add."""
    rng = np.random.default_rng(11)
    t = f"tensor<{N}xf32>"
    args = [(n, t, uniform(rng, N, np.float32)) for n in "abcd"]
    body = f"""
  %m0 = stablehlo.multiply %a, %b : {t}
  %r0 = stablehlo.add %m0, %c : {t}
  %m1 = stablehlo.multiply %a, %d : {t}
  %r1 = stablehlo.add %m1, %c : {t}
  %q1 = stablehlo.multiply %m1, %d : {t}
  %m2 = stablehlo.multiply %b, %d : {t}
  %s2 = stablehlo.add %m2, %c : {t}
  %r2 = stablehlo.add %s2, %m2 : {t}
  %m3 = stablehlo.multiply %c, %d : {t}
  %r3 = stablehlo.add %m3, %a : {t}
  %q3 = stablehlo.add %m3, %b : {t}"""
    outs = [("%r0", t), ("%m0", t), ("%r1", t), ("%q1", t), ("%r2", t), ("%r3", t), ("%q3", t)]
    write("f32_uses", args, body, outs)


def shapes():
    """A broadcast product (hoisted by LLVM: separate); reshaped, padded, sliced ones (fused)."""
    rng = np.random.default_rng(12)
    v, mt, ft = "tensor<64xf32>", "tensor<64x64xf32>", "tensor<4096xf32>"
    args = [("a", v, uniform(rng, 64, np.float32)), ("b", v, uniform(rng, 64, np.float32)),
            ("c", mt, uniform(rng, (64, 64), np.float32)),
            ("x", mt, uniform(rng, (64, 64), np.float32)),
            ("y", mt, uniform(rng, (64, 64), np.float32)),
            ("z", ft, uniform(rng, 4096, np.float32)),
            ("w", "tensor<65xf32>", uniform(rng, 65, np.float32))]
    body = f"""
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m0 = stablehlo.multiply %a, %b : {v}
  %b0 = stablehlo.broadcast_in_dim %m0, dims = [1] : ({v}) -> {mt}
  %r0 = stablehlo.add %b0, %c : {mt}
  %m1 = stablehlo.multiply %x, %y : {mt}
  %s1 = stablehlo.reshape %m1 : ({mt}) -> {ft}
  %r1 = stablehlo.subtract %z, %s1 : {ft}
  %m2 = stablehlo.multiply %a, %b : {v}
  %n2 = stablehlo.negate %m2 : {v}
  %p2 = stablehlo.pad %n2, %zero, low = [1], high = [0], interior = [0] : ({v}, tensor<f32>) -> tensor<65xf32>
  %r2 = stablehlo.add %w, %p2 : tensor<65xf32>
  %m3 = stablehlo.multiply %x, %y : {mt}
  %s3 = stablehlo.slice %m3 [1:33, 0:64:2] : ({mt}) -> tensor<32x32xf32>
  %c3 = stablehlo.slice %c [0:32, 32:64] : ({mt}) -> tensor<32x32xf32>
  %r3 = stablehlo.add %s3, %c3 : tensor<32x32xf32>"""
    write("f32_shapes", args, body, [("%r0", mt), ("%r1", ft), ("%r2", "tensor<65xf32>"),
                                     ("%r3", "tensor<32x32xf32>")])


def narrow(dt, np_t):
    """f16 / bf16 products are rounded before the add (never fused)."""
    rng = np.random.default_rng(13)
    t = f"tensor<{N}x{dt}>"
    args = [(n, t, uniform(rng, N, np.float32).astype(np_t)) for n in "abc"]
    body = f"""
  %m = stablehlo.multiply %a, %b : {t}
  %r0 = stablehlo.add %m, %c : {t}"""
    write(f"{dt}_not_fused", args, body, [("%r0", t)])


def reductions(dt, np_t):
    """Sums of products and vector dots: a sequential chain of fused multiply-adds."""
    rng = np.random.default_rng(14)
    outs, body, args = [], "", []
    for i, (rows, n) in enumerate(((1, 5), (3, 8), (2, 16), (3, 32))):
        t = f"tensor<{rows}x{n}x{dt}>"
        r = f"tensor<{rows}x{dt}>"
        args += [(f"a{i}", t, uniform(rng, (rows, n), np_t)),
                 (f"b{i}", t, uniform(rng, (rows, n), np_t))]
        body += f"""
  %m{i} = stablehlo.multiply %a{i}, %b{i} : {t}
  %s{i} = stablehlo.reduce(%m{i} init: %init) applies stablehlo.add across dimensions = [1] : ({t}, tensor<{dt}>) -> {r}"""
        outs.append((f"%s{i}", r))
    for i, n in enumerate((3, 5, 8, 17)):
        v = f"tensor<{n}x{dt}>"
        args += [(f"x{i}", v, uniform(rng, n, np_t)), (f"y{i}", v, uniform(rng, n, np_t))]
        body += f"""
  %d{i} = stablehlo.dot_general %x{i}, %y{i}, contracting_dims = [0] x [0] : ({v}, {v}) -> tensor<{dt}>"""
        outs.append((f"%d{i}", f"tensor<{dt}>"))
    t = f"tensor<5x3x{dt}>"
    args += [("p", t, uniform(rng, (5, 3), np_t)), ("q", t, uniform(rng, (5, 3), np_t))]
    body += f"""
  %mp = stablehlo.multiply %p, %q : {t}
  %sp = stablehlo.reduce(%mp init: %init) applies stablehlo.add across dimensions = [0] : ({t}, tensor<{dt}>) -> tensor<3x{dt}>"""
    outs.append(("%sp", f"tensor<3x{dt}>"))
    body = f"\n  %init = stablehlo.constant dense<0.25> : tensor<{dt}>" + body
    write(f"{dt}_product_sums", args, body, outs)


def main():
    os.makedirs(OUT, exist_ok=True)
    elementwise("f32", np.float32, 1)
    elementwise("f64", np.float64, 2)
    uses()
    shapes()
    narrow("f16", np.float16)
    narrow("bf16", ml_dtypes.bfloat16)
    reductions("f32", np.float32)
    reductions("f64", np.float64)


if __name__ == "__main__":
    main()
