#!/usr/bin/env python3
"""Timing half of bench/parse_speed.sh (run that script instead of this file).

Measures, best of N:
  * `neuronc-rs verify FILE` as a whole process (hyperfine when installed, else a
    subprocess loop timed with perf_counter);
  * jaxlib's in-process MLIR parse + verify of the same text (context made once,
    untimed, as an embedding framework would);
then the same for a module 10x larger, built from 10 renamed copies of FILE's functions.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def time_process(cmd, runs):
    """Best wall time in seconds of running `cmd` (must exit 0)."""
    if shutil.which("hyperfine"):
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run(
                ["hyperfine", "-N", "--style", "none", "--warmup", "3", "--runs", str(runs),
                 "--export-json", out.name, " ".join(cmd)],
                check=True, stdout=subprocess.DEVNULL)
            return min(json.load(open(out.name))["results"][0]["times"])
    subprocess.run(cmd, check=True)  # warm-up, and fail loudly if the file is rejected
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def time_jaxlib(text, runs):
    """Best in-process time in seconds of jaxlib's MLIR parse + verify of `text`."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir
    ctx = jax_mlir.make_ir_context()
    best = float("inf")
    with ctx:
        for _ in range(runs + 2):
            t = time.perf_counter()
            module = ir.Module.parse(text)
            ok = module.operation.verify()
            best = min(best, time.perf_counter() - t)
            assert ok, "jaxlib rejected the module"
    return best


SYMBOL = re.compile(r"@([A-Za-z_$.][\w$.\-]*)")


def enlarge(text, copies):
    """`copies` copies of the module's functions, symbols renamed per copy."""
    lines = text.split("\n")
    if lines and lines[0].startswith("module"):
        end = max(i for i, l in enumerate(lines) if l == "}")
        head, body, tail = lines[0], lines[1:end], lines[end:]
    else:
        head, body, tail = "module {", lines, ["}"]
    body = "\n".join(body)
    parts = [head]
    for k in range(copies):
        parts.append(body if k == 0 else SYMBOL.sub(lambda m: f"@{m.group(1)}_c{k}", body))
    return "\n".join(parts + tail)


def measure(binary, path, text, runs):
    ours = time_process([binary, "verify", path], runs)
    theirs = time_jaxlib(text, runs)
    return ours, theirs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()

    text = open(args.file, encoding="utf-8").read()
    mb = len(text.encode()) / 1e6
    ours, theirs = measure(args.bin, args.file, text, args.runs)
    print(f"file: {args.file} ({mb * 1e3:.0f} KB), best of {args.runs}")
    print(f"neuronc-rs verify (whole process): {ours * 1e3:8.2f} ms  {mb / ours:7.1f} MB/s")
    print(f"jaxlib parse+verify (in process):  {theirs * 1e3:8.2f} ms  {mb / theirs:7.1f} MB/s")
    print(f"ratio ours/jaxlib: {ours / theirs:.2f}  (target <= 0.5)")

    with tempfile.TemporaryDirectory() as tmp:
        big_path = os.path.join(tmp, "large_x10.mlir")
        big = enlarge(text, 10)
        with open(big_path, "w", encoding="utf-8") as f:
            f.write(big)
        big_mb = len(big.encode()) / 1e6
        big_ours, big_theirs = measure(args.bin, big_path, big, max(3, args.runs // 4))
    print(f"10x module ({big_mb:.1f} MB): neuronc-rs {big_ours * 1e3:.2f} ms "
          f"({big_mb / big_ours:.1f} MB/s), jaxlib {big_theirs * 1e3:.2f} ms")
    print(f"ratio large/small (neuronc-rs): {big_ours / ours:.2f}  (target <= 11)")
    print(f"ratio large/small (jaxlib):     {big_theirs / theirs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
