#!/usr/bin/env python3
"""Writes interp/tests/xla_reassoc/NAME.{mlir,npz}: small programs whose f16/f32 results
XLA:CPU's algebraic simplifier (constant re-association, A / sqrt(B), A / rsqrt(B)) or
LLVM's kept reduce loops change, with `out_*` computed by XLA:CPU through jaxlib
(tools/xla_run.py). Run by hand: /work/venv/bin/python interp/tests/gen_xla_reassoc.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from xla_run import save_case  # noqa: E402

OUT = os.path.join(HERE, "xla_reassoc")
N = 4096


def const_chains(dt):
    t = f"tensor<{N}x{dt}>"
    s = f"tensor<{dt}>"
    body = f"""
  %c1 = stablehlo.constant dense<0.3> : {t}
  %c2 = stablehlo.constant dense<0.7001> : {t}
  %s1 = stablehlo.constant dense<0.3> : {s}
  %s2 = stablehlo.constant dense<0.7001> : {s}
  %b1 = stablehlo.broadcast_in_dim %s1, dims = [] : ({s}) -> {t}
  %b2 = stablehlo.broadcast_in_dim %s2, dims = [] : ({s}) -> {t}
  %0 = stablehlo.subtract %x, %c1 : {t}
  %r0 = stablehlo.add %0, %c1 : {t}
  %1 = stablehlo.add %x, %c1 : {t}
  %r1 = stablehlo.add %c2, %1 : {t}
  %2 = stablehlo.subtract %x, %b1 : {t}
  %r2 = stablehlo.add %2, %b2 : {t}
  %3 = stablehlo.subtract %c1, %x : {t}
  %r3 = stablehlo.add %3, %c2 : {t}
  %4 = stablehlo.subtract %x, %c1 : {t}
  %r4 = stablehlo.subtract %4, %c2 : {t}
  %5 = stablehlo.multiply %x, %c1 : {t}
  %r5 = stablehlo.multiply %c2, %5 : {t}
  %6 = stablehlo.add %x, %n1 : {t}
  %r6 = stablehlo.add %6, %n2 : {t}
  %r7 = stablehlo.add %6, %c2 : {t}
  %7 = stablehlo.add %r0, %c2 : {t}
  %r8 = stablehlo.add %7, %c1 : {t}"""
    outs = ["%r0", "%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%6"]
    return body, outs


def root_divides(dt):
    t = f"tensor<{N}x{dt}>"
    body = f"""
  %0 = stablehlo.sqrt %x : {t}
  %r0 = stablehlo.divide %a, %0 : {t}
  %1 = stablehlo.rsqrt %x : {t}
  %r1 = stablehlo.divide %a, %1 : {t}
  %2 = stablehlo.sqrt %a : {t}
  %r2 = stablehlo.divide %x, %2 : {t}
  %3 = stablehlo.sqrt %x : {t}
  %r3 = stablehlo.divide %a, %3 : {t}
  %r4 = stablehlo.multiply %3, %a : {t}
  %one = stablehlo.constant dense<1.0> : {t}
  %4 = stablehlo.rsqrt %a : {t}
  %r5 = stablehlo.divide %one, %4 : {t}"""
    return body, ["%r0", "%r1", "%r2", "%r3", "%r4", "%r5"]


def write(name, sig, body, outs, out_types, args):
    text = (f"func.func @main({sig}) -> ({', '.join(out_types)}) {{{body}\n"
            f"  return {', '.join(outs)} : {', '.join(out_types)}\n}}\n")
    save_case(OUT, name, text, args)


def elementwise_cases():
    rng = np.random.default_rng(7)
    for dt, np_t in (("f16", np.float16), ("f32", np.float32)):
        x = rng.uniform(0.05, 3.0, N).astype(np_t)
        a = rng.uniform(0.1, 3.0, N).astype(np_t)
        n1 = rng.uniform(0.1, 0.9, N).astype(np_t)
        n2 = rng.uniform(0.1, 0.9, N).astype(np_t)
        t = f"tensor<{N}x{dt}>"
        body, outs = const_chains(dt)
        write(f"{dt}_const_chains", f"%x: {t}, %n1: {t}, %n2: {t}", body, outs, [t] * len(outs),
              [x, n1, n2])
        if dt == "f16":  # XLA's f32 rsqrt is not correctly rounded: f16 only
            body, outs = root_divides(dt)
            write(f"{dt}_root_divides", f"%x: {t}, %a: {t}", body, outs, [t] * len(outs), [x, a])


def layer_norm_grad():
    """torch_xla's f16 LayerNorm forward and backward: batch_norm_training, the variance
    recomputed as (1 / rsqrt(var + eps))^2 - eps, batch_norm_grad (which adds eps back)."""
    rng = np.random.default_rng(11)
    x = rng.normal(0.3, 1.0, (6, 32)).astype(np.float16)
    dy = rng.normal(0.0, 20.0, (6, 32)).astype(np.float16)
    t, t3, v = "tensor<6x32xf16>", "tensor<1x6x32xf16>", "tensor<6xf16>"
    body = f"""
  %one = stablehlo.constant dense<1.0> : {v}
  %zero = stablehlo.constant dense<0.0> : {v}
  %eps = stablehlo.constant dense<1.001360e-05> : {v}
  %x3 = stablehlo.reshape %x : ({t}) -> {t3}
  %dy3 = stablehlo.reshape %dy : ({t}) -> {t3}
  %y, %mean, %var = "stablehlo.batch_norm_training"(%x3, %one, %zero) <{{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}}> : ({t3}, {v}, {v}) -> ({t3}, {v}, {v})
  %0 = stablehlo.add %var, %eps : {v}
  %1 = stablehlo.rsqrt %0 : {v}
  %2 = stablehlo.divide %one, %1 : {v}
  %3 = stablehlo.multiply %2, %2 : {v}
  %4 = stablehlo.subtract %3, %eps : {v}
  %gx, %gs, %go = "stablehlo.batch_norm_grad"(%x3, %one, %mean, %4, %dy3) <{{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}}> : ({t3}, {v}, {v}, {v}, {t3}) -> ({t3}, {v}, {v})"""
    write("f16_layer_norm_grad", f"%x: {t}, %dy: {t}", body, ["%gx", "%gs", "%go"], [t3, v, v],
          [x, dy])


def kept_loops():
    """f16 sums over one dimension of chains of k ops on `streams` inputs: LLVM unrolls
    the light ones (sequential sum) and keeps and vectorizes the heavy ones."""
    rng = np.random.default_rng(5)
    for tr, k, streams in ((32, 6, 1), (32, 7, 1), (32, 5, 2), (32, 4, 3), (16, 16, 1),
                           (16, 15, 1), (24, 10, 1)):
        t = f"tensor<6x{tr}xf16>"
        lines, y = [], "%p0"
        for i in range(k):
            op = "multiply" if i % 2 == 0 else "add"
            lines.append(f"  %z{i} = stablehlo.{op} {y}, %p{(i + 1) % streams} : {t}")
            y = f"%z{i}"
        body = "\n" + "\n".join(lines) + f"""
  %zero = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce({y} init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f16>) -> tensor<6xf16>"""
        sig = ", ".join(f"%p{i}: {t}" for i in range(streams))
        args = [rng.uniform(0.5, 1.5, (6, tr)).astype(np.float16) for _ in range(streams)]
        write(f"f16_sum_{tr}_k{k}_s{streams}", sig, body, ["%r"], ["tensor<6xf16>"], args)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    elementwise_cases()
    layer_norm_grad()
    kept_loops()
