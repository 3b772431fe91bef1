#!/usr/bin/env python3
"""Run the five acceptance checks of neuronc-rs on one real trace with framework outputs.

Usage:
  /work/venv/bin/python tools/check_trace.py FILE.mlir REF.npz [--train] [--keep DIR]
      [--bin PATH] [--no-build] [--timeout S] [--only verify,run,opt,compile,sim] [--recompute]

REF.npz is a fixture npz: arg_000.. = inputs in argument order, out_000.. = framework
outputs in result order (bf16/f8 stored as raw |V2/|V1, typed by the module signature).

Checks (one line each: PASS/FAIL, the worst error relative to max|ref|, the reason):
  verify   `neuronc-rs verify FILE` accepts it; `neuronc-rs fmt FILE` output is accepted by
           jaxlib's MLIR parser+verifier (tools/mlir_check.py), re-verifies with ours, and
           printing it again gives the same text (print fixpoint).
  run      `neuronc-rs run FILE --inputs REF --output OUT` matches the framework outputs.
  opt      `neuronc-rs opt -O2 FILE -o O.mlir`: O verifies (ours), parses in jaxlib, and
           `neuronc-rs run O` matches the framework outputs.
  compile  `neuronc-rs compile FILE -o DIR`; DIR/model.hlo.pb run by XLA:CPU
           (tools/run_hlo_proto.py) matches the framework outputs.
  sim      `neuronc-rs run FILE --engine sim --inputs REF --output OUT` (the compiled kernels
           in the NeuronCore functional simulator) matches the framework outputs.
  --recompute adds `--recompute-for-contraction` to compile and sim.

Tolerance (same as the fixture tests): |got - ref| <= atol*max|ref| + rtol*|ref| per output,
rtol 1e-4, atol 1e-5 (inference); rtol = atol = 1e-3 with --train (on by default when the file
name contains "train" or "grad"). Outputs of <=16-bit float types get at least the type's
epsilon for both; integer/bool outputs must be equal; NaNs compare equal.

The binary is $CARGO_TARGET_DIR/release/neuronc-rs (CARGO_TARGET_DIR defaults to target/); it
is rebuilt (`cargo build --release -p neuronc`) when it is older than any workspace
.rs/Cargo.toml file, unless --no-build.
Exit status 0 when every check passes, 1 otherwise, 2 on usage errors.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
from npzio import load_npz, numbered  # noqa: E402

CRATES = ["ir", "interp", "passes", "neuron-backend", "compiler"]


class CheckFailed(Exception):
    """A check failed; the message is the one-line reason."""


def newest_source_mtime():
    newest = os.path.getmtime(os.path.join(REPO, "Cargo.toml"))
    for crate in CRATES:
        for root, _dirs, files in os.walk(os.path.join(REPO, crate)):
            for f in files:
                if f.endswith(".rs") or f == "Cargo.toml":
                    newest = max(newest, os.path.getmtime(os.path.join(root, f)))
    return newest


def ensure_binary(path, build):
    stale = not os.path.exists(path) or os.path.getmtime(path) < newest_source_mtime()
    if stale and build:
        print(f"building {path} (stale or missing) ...", file=sys.stderr, flush=True)
        r = subprocess.run(["cargo", "build", "--release", "-p", "neuronc"], cwd=REPO,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"check_trace: cargo build failed:\n{r.stderr[-3000:]}")
    elif stale:
        print(f"warning: {path} is older than the sources", file=sys.stderr)
    if not os.path.exists(path):
        sys.exit(f"check_trace: no binary {path}")


def sh(cmd, timeout):
    """Runs cmd; raises CheckFailed with the tail of stderr when it fails."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        what = " ".join(os.path.basename(c) for c in cmd[:2])
        raise CheckFailed(f"`{what}` timed out after {timeout}s")
    if r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        head = " | ".join(msg[:3])[:400]
        raise CheckFailed(f"`{os.path.basename(cmd[0])} {cmd[1]}` exit {r.returncode}: {head}")
    return r.stdout


# ------------------------------------------------------------------ comparison
def result_dtypes(text):
    """numpy dtypes of @main's results (None where unknown), from jaxlib's parse."""
    from mlir_check import make_context, parse_module
    from xla_run import signature
    try:
        ctx = make_context()
        m = parse_module(text, ctx)
        with ctx:
            return [dt for _shape, dt in signature(m, "main")[1]]
    except (Exception, SystemExit):
        return None


def as_typed(a, dt):
    if a.dtype.kind == "V" and dt is not None and np.dtype(dt).itemsize == a.dtype.itemsize:
        return a.view(dt)
    return a


def compare(outs, ref, dtypes, rtol, atol):
    """(worst error / max|ref| over outputs, list of failing-output descriptions)."""
    keys = numbered(ref, "out_")
    if len(outs) != len(keys):
        return float("inf"), [f"{len(outs)} outputs, reference has {len(keys)}"]
    worst, bad = 0.0, []
    for i, (k, o) in enumerate(zip(keys, outs)):
        dt = dtypes[i] if dtypes and i < len(dtypes) else None
        r, o = as_typed(ref[k], dt), as_typed(np.asarray(o), dt)
        if o.shape != r.shape:
            bad.append(f"{k}: shape {o.shape} vs ref {r.shape}")
            worst = float("inf")
            continue
        if r.dtype.kind in "biu":
            n = int(np.sum(o != r))
            if n:
                bad.append(f"{k}: {n} of {r.size} integer elements differ")
                worst = float("inf")
            continue
        rt, at = rtol, atol
        try:
            import ml_dtypes
            if r.dtype.itemsize <= 2 or (r.dtype.kind == "c" and r.dtype.itemsize <= 4):
                eps = float(ml_dtypes.finfo(r.dtype).eps)
                rt, at = max(rt, eps), max(at, eps)
        except (ValueError, TypeError):
            pass
        ct = np.complex128 if r.dtype.kind == "c" else np.float64
        of, rf = o.astype(ct), r.astype(ct)
        same = (np.isnan(of) & np.isnan(rf)) | (np.isinf(rf) & (of == rf))
        diff = np.where(same, 0.0, np.abs(of - rf))
        fin = np.abs(rf[np.isfinite(rf)])
        scale = float(fin.max()) if fin.size else 1.0
        scale = scale if scale > 0 else 1.0
        e = float(np.nanmax(diff)) / scale if diff.size else 0.0
        if np.isnan(diff).any():
            e = float("inf")
        mag = np.where(np.isfinite(rf), np.abs(rf), 0.0)
        ok = bool(np.all(diff <= at * scale + rt * mag))
        worst = max(worst, e)
        if not ok:
            j = int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))) if diff.size else 0
            bad.append(f"{k}{list(r.shape)}: err/max|ref|={e:.2e} at flat {j} "
                       f"(got {of.flat[j]:.6g}, ref {rf.flat[j]:.6g})")
    return worst, bad


def load_outs(path):
    z = load_npz(path)
    return [z[k] for k in numbered(z, "out_")]


# ---------------------------------------------------------------------- checks
class Checker:
    def __init__(self, a, work):
        self.a, self.work, self.bin = a, work, a.bin
        self.text = open(a.file).read()
        self.ref = load_npz(a.ref)
        # torch_xla's bit-packed i1 constants make jaxlib reject some traces: read the
        # result types from our `fmt` output then (bf16 outputs need them)
        self.dtypes = result_dtypes(self.text) or self._dtypes_via_fmt()
        self.tol = (1e-3, 1e-3) if a.train else (1e-4, 1e-5)
        self._ctx = None

    def _dtypes_via_fmt(self):
        path = os.path.join(self.work, "dtypes_fmt.mlir")
        try:
            self.nc("fmt", self.a.file, "-o", path)
        except CheckFailed:
            return None
        return result_dtypes(open(path).read())

    def nc(self, *args):
        return sh([self.bin, *args], self.a.timeout)

    def jaxlib_parse(self, path):
        from mlir_check import make_context, parse_module
        try:
            ctx = make_context()
            m = parse_module(open(path).read(), ctx)
            with ctx:
                if not m.operation.verify():
                    raise CheckFailed(f"jaxlib verifier rejects {os.path.basename(path)}")
        except CheckFailed:
            raise
        except Exception as e:  # MLIRError: the diagnostic text
            msg = " | ".join(str(e).splitlines()[:4])[:500]
            raise CheckFailed(f"jaxlib rejects {os.path.basename(path)}: {msg}")

    def matches(self, outs, what):
        worst, bad = compare(outs, self.ref, self.dtypes, *self.tol)
        if bad:
            more = f" (+{len(bad) - 2} more outputs)" if len(bad) > 2 else ""
            raise CheckFailed(f"{what} mismatch: " + "; ".join(bad[:2]) + more, worst)
        return worst

    def check_verify(self):
        self.nc("verify", self.a.file)
        p1, p2 = os.path.join(self.work, "fmt1.mlir"), os.path.join(self.work, "fmt2.mlir")
        self.nc("fmt", self.a.file, "-o", p1)
        self.jaxlib_parse(p1)
        self.nc("verify", p1)
        self.nc("fmt", p1, "-o", p2)
        if open(p1).read() != open(p2).read():
            l1, l2 = open(p1).read().splitlines(), open(p2).read().splitlines()
            n = next((i for i, (x, y) in enumerate(zip(l1, l2)) if x != y), min(len(l1), len(l2)))
            raise CheckFailed(f"fmt is not a fixpoint: first difference at line {n + 1}")
        return None

    def run_ours(self, path, tag, *extra):
        out = os.path.join(self.work, f"{tag}_out.npz")
        self.nc("run", path, "--inputs", self.a.ref, "--output", out, *extra)
        return load_outs(out)

    def check_run(self):
        return self.matches(self.run_ours(self.a.file, "run"), "interpreter")

    def check_opt(self):
        o = os.path.join(self.work, "opt.mlir")
        self.nc("opt", "-O2", self.a.file, "-o", o)
        self.nc("verify", o)
        self.jaxlib_parse(o)
        return self.matches(self.run_ours(o, "opt"), "interpreter on -O2 output")

    def check_compile(self):
        d = os.path.join(self.work, "compiled")
        self.nc("compile", self.a.file, "-o", d, *self.recompute_flag())
        pb = os.path.join(d, "model.hlo.pb")
        if not os.path.exists(pb):
            raise CheckFailed("compile wrote no model.hlo.pb")
        import run_hlo_proto as rhp
        z = load_npz(self.a.ref)
        args = [z[k] for k in numbered(z, "arg_")]
        try:
            proto = rhp.load_proto(pb, False)
            backend, exe = rhp.compile_proto(proto)
            outs = rhp.run(exe, backend, args, proto)
        except Exception as e:
            msg = " | ".join(str(e).splitlines()[:3])[:500]
            raise CheckFailed(f"XLA rejects model.hlo.pb: {type(e).__name__}: {msg}")
        return self.matches(outs, "XLA:CPU on model.hlo.pb")

    def recompute_flag(self):
        return ["--recompute-for-contraction"] if self.a.recompute else []

    def check_sim(self):
        outs = self.run_ours(self.a.file, "sim", "--engine", "sim", *self.recompute_flag())
        return self.matches(outs, "NeuronCore simulator")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("ref")
    ap.add_argument("--train", action="store_true", help="training-step tolerance (1e-3)")
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    ap.add_argument("--bin", default=os.path.join(target, "release", "neuronc-rs"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--keep", help="keep the intermediate files in this directory")
    ap.add_argument("--only", default="verify,run,opt,compile,sim")
    ap.add_argument("--recompute", action="store_true",
                    help="compile and sim with --recompute-for-contraction")
    a = ap.parse_args(argv)
    stem = os.path.basename(a.file)
    if not a.train and ("train" in stem or "grad" in stem):
        a.train = True
    ensure_binary(a.bin, not a.no_build)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    work = a.keep or tempfile.mkdtemp(prefix="check_trace_")
    os.makedirs(work, exist_ok=True)
    c = Checker(a, work)
    failed = 0
    print(f"{stem}: tolerance rtol={c.tol[0]:g} atol={c.tol[1]:g}*max|ref|")
    for name in a.only.split(","):
        try:
            worst = getattr(c, f"check_{name}")()
            w = "" if worst is None else f" worst={worst:.2e}"
            print(f"PASS {name:8s}{w}", flush=True)
        except CheckFailed as e:
            failed += 1
            worst = e.args[1] if len(e.args) > 1 else None
            w = "" if worst is None else f" worst={worst:.2e}"
            print(f"FAIL {name:8s}{w} {e.args[0]}", flush=True)
    if not a.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
