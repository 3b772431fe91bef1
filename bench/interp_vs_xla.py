#!/usr/bin/env python3
"""Reference interpreter speed against XLA:CPU, side by side in one run.

Generates random inputs for FILE's entry function (tools/xla_run.py conventions), times
XLA:CPU executing the compiled module (in process, compile excluded) and `neuronc-rs run`
on the same inputs (whole process, so parse and npz I/O are included), alternating the two
so that both see the same machine load, takes the best of N of each and prints the ratio
(issue 3 target: <= 5 on BERT-base inference). If the `time_run` example is built
(`cargo build --release -p neuronc-interp --example time_run`), also prints the ratio of
the interpreter's in-process `run_function` time alone. Asserts nothing.

Usage: bench/interp_vs_xla.py [FILE] [--runs N] [--bin target/release/neuronc-rs]
                              [--time-run target/release/examples/time_run]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default="fixtures/models/bert_base_infer.mlir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default="target/release/neuronc-rs")
    ap.add_argument("--time-run", default="target/release/examples/time_run")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    inputs = os.path.join(tmp, "in.npz")
    subprocess.run([sys.executable, "tools/xla_run.py", a.file, "--random-inputs", "0",
                    "--save-inputs", inputs, "--output", os.path.join(tmp, "ref.npz")],
                   check=True, stdout=subprocess.DEVNULL)

    import jax
    import numpy as np
    from jax._src import xla_bridge as xb
    from jax._src.lib import _jax as xc

    jax.config.update("jax_enable_x64", True)
    backend = xb.get_backend("cpu")
    exe = backend.compile_and_load(open(a.file).read(), backend.devices()[:1], xc.CompileOptions())
    data = np.load(inputs)
    dev = backend.devices()[0]
    bufs = [jax.device_put(data[k], dev) for k in sorted(data.files)]

    def xla():
        s = time.perf_counter()
        for r in exe.execute(bufs):
            np.asarray(r)
        return time.perf_counter() - s

    def ours():
        s = time.perf_counter()
        subprocess.run([a.bin, "run", a.file, "--inputs", inputs, "-o", os.path.join(tmp, "o.npz")],
                       check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - s

    def run_only():
        # `time_run FILE IN.npz 1` prints "run: X ms" for one in-process run_function.
        out = subprocess.run([a.time_run, a.file, inputs, "1"], check=True,
                             capture_output=True, text=True).stdout
        return float(re.search(r"^run: ([0-9.]+) ms", out, re.M).group(1)) / 1e3

    timers = {"xla": xla, "ours": ours}
    if os.path.exists(a.time_run):
        timers["run_only"] = run_only
    best = {k: float("inf") for k in timers}
    for f in timers.values():
        f()  # warm up (XLA's first execution, the page cache)
    for _ in range(a.runs):
        for k, f in timers.items():
            best[k] = min(best[k], f())
    tx, to = best["xla"], best["ours"]
    print(f"{a.file}: XLA:CPU {tx * 1e3:.1f} ms, neuronc-rs run {to * 1e3:.1f} ms, "
          f"ratio {to / tx:.2f} (target <= 5)")
    if "run_only" in best:
        tr = best["run_only"]
        print(f"  interpreter alone (run_function, no parse or npz I/O): {tr * 1e3:.1f} ms, "
              f"ratio {tr / tx:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
