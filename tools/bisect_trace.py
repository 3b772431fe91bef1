#!/usr/bin/env python3
"""Find the first value of a trace's @main where `neuronc-rs run` and XLA:CPU disagree.

Usage:
  /work/venv/bin/python tools/bisect_trace.py FILE.mlir IN.npz [--bin PATH] [--rtol R] [--atol A]
      [--values %12,%40] [--step N] [--engine interp|sim]

The module is printed canonically (`neuronc-rs fmt`), then re-emitted with @main returning a
batch of its top-level values (every N-th single-result value, or the ones named by --values);
both the interpreter (or, --engine sim, the compiled kernels in the simulator) and XLA:CPU
(tools/xla_run.py) run it on IN.npz's arg_000.. and the first value whose outputs differ by
more than atol*max|ref| + rtol*|ref| is printed with its line (bf16 outputs are compared as
values; other raw 1- and 2-byte types are skipped). A binary search narrows the batch down to
one value. Only @main's own top-level values are candidates (not values inside regions, such
as a scan's `while` body, or other functions: lower such a body as its own program).
Caveat: returning more values changes XLA's fusion decisions, and with them its rounding
(FMA contraction, reduction order), so at rtol = atol = 0 confirm the value found by returning
it alone (--values).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
from npzio import load_npz  # noqa: E402

DEF = re.compile(r"^    (%[\w.]+) = (.*)$")


def result_type(line):
    """The result type of a single-result op line in canonical form, or None."""
    body = line.split(" loc(")[0].rstrip()
    if "->" in body.rsplit(":", 1)[-1]:
        t = body.rsplit("->", 1)[1].strip()
    else:
        t = body.rsplit(":", 1)[1].strip()
        t = t[t.rfind("tensor<"):] if "tensor<" in t else t  # `select`: `: cond_type, result_type`
    return t if t.startswith("tensor<") else None


def candidates(lines):
    start = next(i for i, ln in enumerate(lines) if "func.func @main(" in ln or "func.func public @main(" in ln)
    out = []
    for i in range(start + 1, len(lines)):
        ln = lines[i]
        if ln.startswith("  }"):
            break
        m = DEF.match(ln)
        if m and ":" not in m.group(1) and not m.group(2).startswith(('"', "stablehlo.while", "stablehlo.case",
                                                                        "stablehlo.if")):
            t = result_type(ln)
            if t:
                out.append((i, m.group(1), t))
    return start, out


def with_returns(lines, start, vals):
    """The module text with @main returning `vals` [(line, name, type)]."""
    new = list(lines)
    sig = new[start]
    head, _ = sig.rsplit(") -> ", 1) if ") -> " in sig else (sig.rsplit(") {", 1)[0], None)
    new[start] = head + ") -> (" + ", ".join(t for _, _, t in vals) + ") {"
    for j in range(start + 1, len(new)):
        if new[j].startswith("    return ") or new[j].startswith("    func.return "):
            new[j] = "    return " + ", ".join(n for _, n, _ in vals) + " : " + ", ".join(t for _, _, t in vals)
            break
    return "\n".join(new) + "\n"


def run_both(text, inputs, bin_, work, engine="interp"):
    path = os.path.join(work, "cut.mlir")
    open(path, "w").write(text)
    ours, ref = os.path.join(work, "ours.npz"), os.path.join(work, "ref.npz")
    r = subprocess.run([bin_, "run", path, "--inputs", inputs, "-o", ours, "--engine", engine], capture_output=True,
                       text=True)
    if r.returncode:
        raise SystemExit(f"neuronc-rs run failed on {path}:\n{r.stderr[-2000:]}")
    subprocess.run([sys.executable, os.path.join(TOOLS, "xla_run.py"), path, "--inputs", inputs, "--output", ref],
                   check=True, capture_output=True)
    return load_npz(ours), load_npz(ref)


def widen(x):
    """float64 of an output; raw 2-byte records are bf16 bit patterns; other raw types: None."""
    x = np.asarray(x)
    if x.dtype.kind == "V":
        if x.dtype.itemsize != 2:
            return None
        return (x.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def bad(ours, ref, k, rtol, atol):
    a, b = widen(ours[f"out_{k:03d}"]), widen(ref[f"out_{k:03d}"])
    if a is None or b is None:
        return False
    scale = np.nanmax(np.abs(b)) if b.size else 0.0
    diff = np.abs(a - b)
    both_nan = np.isnan(a) & np.isnan(b)
    lim = atol * scale + rtol * np.abs(b)
    return bool(np.any((diff > lim) & ~both_nan))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("inputs")
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release",
                                                  "neuronc-rs"))
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-6)
    ap.add_argument("--values", default="")
    ap.add_argument("--step", type=int, default=0)
    ap.add_argument("--engine", default="interp", choices=("interp", "sim"), help="`run --engine` to compare")
    a = ap.parse_args()
    text = subprocess.run([a.bin, "fmt", a.file], check=True, capture_output=True, text=True).stdout
    lines = text.splitlines()
    start, cands = candidates(lines)
    if a.values:
        want = set(a.values.split(","))
        cands = [c for c in cands if c[1] in want]
    with tempfile.TemporaryDirectory() as work:
        lo, hi = 0, len(cands)  # invariant: first bad candidate index in [lo, hi)
        step = a.step or max(1, len(cands) // 24)
        while hi - lo > 1:
            idx = sorted(set(list(range(lo, hi, max(1, (hi - lo) // 24 if not a.step else step))) + [hi - 1]))
            batch = [cands[i] for i in idx]
            ours, ref = run_both(with_returns(lines, start, batch), a.inputs, a.bin, work, a.engine)
            first = next((j for j in range(len(batch)) if bad(ours, ref, j, a.rtol, a.atol)), None)
            if first is None:
                print("no mismatch among the candidates")
                return 0
            new_hi = idx[first] + 1
            new_lo = idx[first - 1] + 1 if first > 0 else lo
            print(f"  mismatch first at {cands[idx[first]][1]}; narrowing to [{new_lo}, {new_hi})", flush=True)
            if (new_lo, new_hi) == (lo, hi):
                break
            lo, hi = new_lo, new_hi
        i, name, t = cands[hi - 1]
        print(f"first mismatching value: {name} : {t}\n  line {i + 1}: {lines[i].strip()[:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
