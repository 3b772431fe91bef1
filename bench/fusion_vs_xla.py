#!/usr/bin/env python3
"""Side-by-side benchmark of neuronc-rs against XLA:CPU on one StableHLO file.

Measured in one run:
  * compile time: `neuronc-rs compile FILE` (whole process, best of N) vs XLA:CPU
    compiling the same text through jaxlib (in process, best of N);
  * HBM traffic after fusion: `neuronc-rs explain --json` `hbm_bytes` vs the traffic implied
    by XLA's own fusion decisions: for every instruction left in XLA's optimized ENTRY
    computation (fusions and unfused ops; parameters, constants, tuples, get-tuple-element
    and bitcasts excluded) the bytes of its operands plus its result;
  * transposes relative to matmul operand bytes (ours only; XLA:CPU has no such notion).

Prints ratios; asserts nothing. Usage:
  bench/fusion_vs_xla.py [FILE] [--runs N] [--bin target/release/neuronc-rs]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4,
         "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
SKIP = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all"}
SHAPE = re.compile(r"\b(pred|[suf]\d+|bf16|c64|c128)\[([\d,]*)\]")
DEF = re.compile(r"^\s*(ROOT\s+)?(%?[\w.\-]+)\s*=\s*(.*?)\s+([a-z][a-z0-9\-]*)\((.*)$")


def shape_bytes(text):
    total = 0
    for ty, dims in SHAPE.findall(text):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * BYTES.get(ty, 4)
    return total


def xla_traffic(hlo_text):
    """(instructions, bytes) of the ENTRY computation of optimized HLO text."""
    entry = hlo_text[hlo_text.index("\nENTRY"):]
    entry = entry[: entry.index("\n}")]
    sizes, count, traffic = {}, 0, 0
    for line in entry.splitlines()[1:]:
        m = DEF.match(line)
        if not m:
            continue
        name, shape, opcode, rest = m.group(2).lstrip("%"), m.group(3), m.group(4), m.group(5)
        sizes[name] = shape_bytes(shape)
        if opcode in SKIP:
            continue
        args = rest.split(")", 1)[0]
        operands = [a.lstrip("%") for a in re.findall(r"%?([\w.\-]+)", args)]
        count += 1
        traffic += sizes[name] + sum(sizes.get(o, 0) for o in operands)
    return count, traffic


def best_of(n, f):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default="fixtures/models/bert_base_train_step.mlir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default="target/release/neuronc-rs")
    a = ap.parse_args()
    from jax._src import xla_bridge as xb
    from jax._src.lib import _jax as xc

    text = open(a.file).read()
    backend = xb.get_backend("cpu")
    holder = {}

    def xla_compile():
        holder["exe"] = backend.compile_and_load(text, backend.devices()[:1], xc.CompileOptions())

    t_xla = best_of(a.runs, xla_compile)
    hlo = "\n".join(m.to_string() for m in holder["exe"].hlo_modules())
    xla_kernels, xla_bytes = xla_traffic(hlo)

    out = tempfile.mkdtemp()
    t_ours = best_of(a.runs, lambda: subprocess.run(
        [a.bin, "compile", "--no-cache", a.file, "-o", out], check=True, stdout=subprocess.DEVNULL))
    ex = json.loads(subprocess.run([a.bin, "explain", "--json", a.file], check=True,
                                   capture_output=True, text=True).stdout)
    print(f"file: {a.file}")
    print(f"compile time   : neuronc-rs {t_ours:.3f} s, XLA:CPU {t_xla:.3f} s, "
          f"speedup {t_xla / t_ours:.1f}x (target >= 15x)")
    print(f"kernels        : neuronc-rs {ex['kernels']}, XLA:CPU {xla_kernels}")
    print(f"hbm bytes      : neuronc-rs {ex['hbm_bytes'] / 1e9:.2f} GB, XLA:CPU fusion "
          f"{xla_bytes / 1e9:.2f} GB, ratio {ex['hbm_bytes'] / max(1, xla_bytes):.2f} (target <= 1)")
    print(f"unfused        : {ex['hbm_bytes_unfused'] / 1e9:.2f} GB")
    print(f"transposes     : {ex['transposes']} moving {ex['transpose_bytes'] / 1e6:.1f} MB = "
          f"{100 * ex['transpose_bytes'] / max(1, ex['matmul_operand_bytes']):.2f}% of matmul "
          f"operand bytes (target <= 5% for inference)")
    report = json.load(open(os.path.join(out, "report.json")))
    print(f"plan quality   : predicted {report['predicted_time_s'] * 1e3:.3f} ms, roofline "
          f"{report['roofline_time_s'] * 1e3:.3f} ms, ratio "
          f"{report['predicted_time_s'] / report['roofline_time_s']:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
