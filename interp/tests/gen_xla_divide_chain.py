#!/usr/bin/env python3
"""Writes interp/tests/xla_divide_chain/NAME.{mlir,npz}: small programs whose results
XLA:CPU's algebraic simplifier changes by rewriting divide chains, divides by exp/pow,
exp products, small integer powers and logs of roots and powers, with `out_*` computed by
XLA:CPU through jaxlib (tools/xla_run.py). Run by hand:
/work/venv/bin/python interp/tests/gen_xla_divide_chain.py
"""
import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from xla_run import save_case  # noqa: E402

OUT = os.path.join(HERE, "xla_divide_chain")
N = 4096
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}

# Chains and integer powers: exact arithmetic (and XLA's pow), testable in every type.
CHAINS = """
  %k = stablehlo.constant dense<1.7> : T
  %k2 = stablehlo.constant dense<-2.0> : T
  %k3 = stablehlo.constant dense<3.0> : T
  %km = stablehlo.constant dense<-1.0> : T
  %sq = stablehlo.constant dense<2.0> : T
  %0 = stablehlo.power %b, %c : T
  %r0 = stablehlo.divide %a, %0 : T
  %1 = stablehlo.divide %a, %b : T
  %r1 = stablehlo.divide %1, %d : T
  %2 = stablehlo.divide %b, %d : T
  %r2 = stablehlo.divide %a, %2 : T
  %r3 = stablehlo.divide %1, %2 : T
  %3 = stablehlo.divide %k, %a : T
  %r4 = stablehlo.divide %3, %b : T
  %4 = stablehlo.divide %k, %b : T
  %r5 = stablehlo.divide %a, %4 : T
  %r6 = stablehlo.divide %1, %k : T
  %5 = stablehlo.divide %b, %k : T
  %r7 = stablehlo.divide %a, %5 : T
  %r8 = stablehlo.power %a, %sq : T
  %r9 = stablehlo.power %a, %k3 : T
  %r10 = stablehlo.power %a, %km : T
  %r11 = stablehlo.power %a, %k2 : T
  %6 = stablehlo.power %b, %k2 : T
  %r12 = stablehlo.divide %a, %6 : T
  %7 = stablehlo.divide %r1, %c : T
  %r13 = stablehlo.divide %7, %b : T"""
CHAIN_OUTS = [f"%r{i}" for i in range(14)] + ["%1", "%0"]

# Transcendental cases: f16 only (XLA's f32/f64 exp and log are not the interpreter's).
TRANSC = """
  %e = stablehlo.exponential %b : T
  %r0 = stablehlo.divide %a, %e : T
  %ea = stablehlo.exponential %a : T
  %r1 = stablehlo.multiply %ea, %e : T
  %r2 = stablehlo.divide %ea, %e : T
  %q = stablehlo.divide %d, %a : T
  %r3 = stablehlo.divide %q, %e : T
  %s = stablehlo.sqrt %a : T
  %r4 = stablehlo.log %s : T
  %rs = stablehlo.rsqrt %a : T
  %r5 = stablehlo.log %rs : T
  %p = stablehlo.power %b, %c : T
  %r6 = stablehlo.log %p : T
  %s2 = stablehlo.sqrt %c2 : T
  %r7 = stablehlo.divide %q, %s2 : T"""
TRANSC_OUTS = [f"%r{i}" for i in range(8)] + ["%e", "%s"]


def write(name, dt, body, outs, args):
    t = f"tensor<{N}x{dt}>"
    names = "abcd" if len(args) == 4 else ["a", "b", "c", "d", "c2"]
    sig = ", ".join(f"%{n}: {t}" for n in names[:len(args)])
    types = ", ".join([t] * len(outs))
    text = (f"func.func @main({sig}) -> ({types}) {{{body.replace('T', t)}\n"
            f"  return {', '.join(outs)} : {types}\n}}\n")
    save_case(OUT, name, text, args)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(17)
    for dt in ("f16", "bf16", "f32", "f64"):
        t = NP[dt]
        a, b, d = (rng.uniform(0.3, 3.0, N).astype(t) for _ in range(3))
        c = rng.uniform(-2.5, 2.5, N).astype(t)
        write(f"{dt}_chains", dt, CHAINS, CHAIN_OUTS, [a, b, c, d])
        if dt in ("f16", "bf16"):
            c2 = rng.uniform(0.3, 3.0, N).astype(t)
            write(f"{dt}_transcendental", dt, TRANSC, TRANSC_OUTS, [a, b, c, d, c2])


if __name__ == "__main__":
    main()
