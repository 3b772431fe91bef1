#!/usr/bin/env python3
"""Reference interpreter speed against XLA:CPU, side by side in one run.

Generates random inputs for FILE's entry function (tools/xla_run.py conventions), times
XLA:CPU executing the compiled module (in process, compile excluded, best of N) and
`neuronc-rs run` on the same inputs (whole process, so parse and npz I/O are included,
best of N), and prints the ratio (issue 3 target: <= 5 on BERT-base inference).
Asserts nothing.

Usage: bench/interp_vs_xla.py [FILE] [--runs N] [--bin target/release/neuronc-rs]
"""
import argparse
import os
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
        for r in exe.execute(bufs):
            np.asarray(r)

    def ours():
        subprocess.run([a.bin, "run", a.file, "--inputs", inputs, "-o", os.path.join(tmp, "o.npz")],
                       check=True, stdout=subprocess.DEVNULL)

    def best(f):
        f()
        t = float("inf")
        for _ in range(a.runs):
            s = time.perf_counter()
            f()
            t = min(t, time.perf_counter() - s)
        return t

    tx, to = best(xla), best(ours)
    print(f"{a.file}: XLA:CPU {tx * 1e3:.1f} ms, neuronc-rs run {to * 1e3:.1f} ms, "
          f"ratio {to / tx:.2f} (target <= 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
