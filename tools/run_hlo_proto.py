#!/usr/bin/env python3
"""Load an XLA HloModuleProto (or HLO text) with real XLA (jaxlib) and run it on CPU.

Oracle tool for the neuronc-rs HLO emitter (neuron-backend/src/hlo).

Usage:
  python tools/run_hlo_proto.py MODEL.hlo.pb --inputs IN.npz --output OUT.npz
  python tools/run_hlo_proto.py MODEL.hlo.txt --text --inputs IN.npz --output OUT.npz
  python tools/run_hlo_proto.py MODEL.hlo.pb --print-hlo     # XLA's own rendering
  python tools/run_hlo_proto.py --batch JOBS.jsonl             # many models, one process

How: the serialized HloModuleProto goes through XLA's HLO importer
(`xla_client._xla.mlir.hlo_to_stablehlo`, which builds an xla::HloModule from the
proto, so malformed protos are rejected there) and the result is compiled for XLA:CPU.
With --text the file is first parsed by XLA's HLO text parser
(`xla_client.hlo.hlo_module_from_text`).

Inputs are the arg_000, arg_001, ... arrays of IN.npz, in parameter order (out_* keys
are ignored). Results (the elements of the entry's root tuple) are written as out_000,
out_001, ... --compare REF.npz compares them with REF's out_* arrays and exits 1 when one
is outside `|got - ref| <= atol*max|ref| + rtol*|ref|` (NaNs equal; for outputs of
16-bit or smaller float types both tolerances are at least the type's epsilon, since one
rounding of the output already differs by that much); it prints per output the max abs
error and the error relative to max|ref|.

--batch reads one JSON object per line, {"model", "text", "inputs", "compare", "rtol",
"atol"}, runs each job as above (one jax import for all) and prints one JSON line per
job: {"model", "ok", "report"} where report is the comparison text or the error.

Element types without a numpy dtype of their own (bf16, f8) are stored in npz files as
raw void arrays (|V2, |V1); they are reinterpreted with the parameter's dtype from the
module's program shape.

Requirements: jax, jaxlib, numpy, ml_dtypes (tools/requirements-oracle.txt).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npzio import load_npz, numbered  # noqa: E402


def load_proto(path, text):
    from jax._src.lib import xla_client as xc
    data = open(path, "rb").read()
    if text:
        module = xc.hlo.hlo_module_from_text(data.decode())
        return module.as_serialized_hlo_module_proto()
    return data


def compile_proto(proto):
    from jax._src import xla_bridge as xb
    from jax._src.lib import xla_client as xc
    from jax._src.lib import _jax
    # jax's CPU LAPACK custom calls (lapack_*_ffi) read function pointers that jax
    # fills only when it lowers a linalg op: a fresh process must fill them first.
    from jax._src.lib import lapack
    lapack._lapack.initialize()
    mlir = xc._xla.mlir.hlo_to_stablehlo(proto)
    backend = xb.get_backend("cpu")
    return backend, backend.compile_and_load(mlir, backend.devices()[:1], _jax.CompileOptions())


def param_dtypes(proto):
    from jax._src.lib import xla_client as xc
    shape = xc.XlaComputation(proto).program_shape()
    return [p.numpy_dtype() for p in shape.parameter_shapes()]


def fix_void(a, dtype):
    """Reinterprets a raw void array (bf16/f8 saved by numpy) as `dtype`."""
    if a.dtype.kind == "V" and dtype is not None and np.dtype(dtype).itemsize == a.dtype.itemsize:
        return a.view(dtype)
    return a


def run(exe, backend, args, proto):
    import jax
    jax.config.update("jax_enable_x64", True)  # keep 64-bit inputs 64-bit
    dev = backend.devices()[0]
    dts = param_dtypes(proto)
    args = [fix_void(a, dts[i] if i < len(dts) else None) for i, a in enumerate(args)]
    bufs = [jax.device_put(a, dev) for a in args]
    return [np.asarray(r) for r in exe.execute(bufs)]


def read_inputs(path):
    if path is None:
        return []
    z = load_npz(path)
    keys = numbered(z, "arg_")
    return [z[k] for k in keys]


def compare(outs, ref_path, rtol, atol, say=print):
    ref = load_npz(ref_path)
    keys = numbered(ref, "out_")
    bad = 0
    if len(keys) != len(outs):
        say(f"output count: got {len(outs)}, reference {len(keys)}")
        return 1
    for k, o in zip(keys, outs):
        r = fix_void(ref[k], o.dtype)
        rt, at = rtol, atol
        if r.dtype.kind == "f" or r.dtype.kind == "V" or "float" in str(r.dtype):
            try:
                import ml_dtypes
                eps = float(ml_dtypes.finfo(r.dtype).eps)
                if r.dtype.itemsize <= 2:  # 16/8-bit floats: one ulp of the type at least
                    rt, at = max(rtol, eps), max(atol, eps)
            except (ValueError, TypeError):
                pass
        if o.shape != r.shape:
            say(f"{k}: shape {o.shape} != reference {r.shape}")
            bad += 1
            continue
        if r.dtype.kind in "biu" or r.dtype == np.bool_:
            err = 0.0 if np.array_equal(o, r) else float("inf")
            scale = 1.0
            ok = err == 0.0
        else:
            of = o.astype(np.complex128 if r.dtype.kind == "c" else np.float64)
            rf = r.astype(of.dtype)
            both_nan = np.isnan(of) & np.isnan(rf)
            same_inf = np.isinf(rf) & (of == rf)
            diff = np.where(both_nan | same_inf, 0.0, np.abs(of - rf))
            finite = np.abs(rf[np.isfinite(rf)])
            scale = float(finite.max()) if finite.size else 1.0
            err = float(np.nanmax(diff)) if diff.size else 0.0
            if np.isnan(diff).any():
                err = float("inf")
            mag = np.where(np.isfinite(rf), np.abs(rf), 0.0)
            ok = bool(np.all(diff <= at * max(scale, 1e-30) + rt * mag))
        rel = err / scale if scale else err
        say(f"{k}: max_abs_err={err:.3e} rel_to_max={rel:.3e} {'ok' if ok else 'MISMATCH'}")
        bad += 0 if ok else 1
    return 1 if bad else 0


def batch(path):
    import json
    import traceback
    for line in open(path):
        if not line.strip():
            continue
        job = json.loads(line)
        lines = []
        try:
            proto = load_proto(job["model"], job.get("text", False))
            backend, exe = compile_proto(proto)
            outs = run(exe, backend, read_inputs(job.get("inputs")), proto)
            rc = compare(outs, job["compare"], job.get("rtol", 1e-4), job.get("atol", 1e-5),
                         say=lines.append)
            ok = rc == 0
        except Exception as e:  # report and go on with the next job
            tb = traceback.format_exception_only(type(e), e)
            lines.append("".join(tb).strip()[-2000:])
            ok = False
        print(json.dumps({"model": job["model"], "ok": ok, "report": "\n".join(lines)}),
              flush=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--batch", help="JSON-lines job file")
    ap.add_argument("--text", action="store_true", help="MODEL is HLO text")
    ap.add_argument("--inputs")
    ap.add_argument("--output")
    ap.add_argument("--print-hlo", action="store_true")
    ap.add_argument("--compare")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5,
                    help="absolute tolerance as a fraction of max|ref|")
    a = ap.parse_args(argv)
    if a.batch:
        return batch(a.batch)
    proto = load_proto(a.model, a.text)
    if a.print_hlo:
        from jax._src.lib import xla_client as xc
        print(xc.XlaComputation(proto).as_hlo_text())
        return 0
    backend, exe = compile_proto(proto)
    outs = run(exe, backend, read_inputs(a.inputs), proto)
    if a.output:
        np.savez(a.output, **{f"out_{i:03d}": o for i, o in enumerate(outs)})
    if a.compare:
        return compare(outs, a.compare, a.rtol, a.atol)
    return 0


if __name__ == "__main__":
    sys.exit(main())
