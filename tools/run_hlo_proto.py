#!/usr/bin/env python3
"""Load an XLA HloModuleProto (or HLO text) with real XLA (jaxlib) and run it on CPU.

Oracle tool for the neuronc-rs HLO emitter (neuron-backend/src/hlo).

Usage:
  python tools/run_hlo_proto.py MODEL.hlo.pb --inputs IN.npz --output OUT.npz
  python tools/run_hlo_proto.py MODEL.hlo.txt --text --inputs IN.npz --output OUT.npz
  python tools/run_hlo_proto.py MODEL.hlo.pb --print-hlo     # XLA's own rendering

How: the serialized HloModuleProto goes through XLA's HLO importer
(`xla_client._xla.mlir.hlo_to_stablehlo`, which builds an xla::HloModule from the
proto, so malformed protos are rejected there) and the result is compiled for XLA:CPU.
With --text the file is first parsed by XLA's HLO text parser
(`xla_client.hlo.hlo_module_from_text`).

Inputs are the arg_000, arg_001, ... arrays of IN.npz, in parameter order (out_* keys
are ignored). Results (the elements of the entry's root tuple) are written as out_000,
out_001, ... --compare REF.npz compares them with REF's out_* arrays and exits 1 when one
is outside `|got - ref| <= atol + rtol*|ref|` (NaNs equal); it prints per output the max
abs error and the error relative to max|ref|.

Requirements: jax, jaxlib, numpy, ml_dtypes (tools/requirements-oracle.txt).
"""
import argparse
import sys

import numpy as np


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
    mlir = xc._xla.mlir.hlo_to_stablehlo(proto)
    backend = xb.get_backend("cpu")
    return backend, backend.compile_and_load(mlir, backend.devices()[:1], _jax.CompileOptions())


def run(exe, backend, args):
    import jax
    jax.config.update("jax_enable_x64", True)  # keep 64-bit inputs 64-bit
    dev = backend.devices()[0]
    bufs = [jax.device_put(a, dev) for a in args]
    return [np.asarray(r) for r in exe.execute(bufs)]


def read_inputs(path):
    if path is None:
        return []
    z = np.load(path)
    keys = sorted(k for k in z.files if k.startswith("arg_"))
    return [z[k] for k in keys]


def compare(outs, ref_path, rtol, atol):
    ref = np.load(ref_path)
    keys = sorted(k for k in ref.files if k.startswith("out_"))
    bad = 0
    if len(keys) != len(outs):
        print(f"output count: got {len(outs)}, reference {len(keys)}")
        return 1
    for k, o in zip(keys, outs):
        r = ref[k]
        if o.shape != r.shape:
            print(f"{k}: shape {o.shape} != reference {r.shape}")
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
            ok = bool(np.all(diff <= atol * max(scale, 1e-30) + rtol * np.abs(rf)))
        rel = err / scale if scale else err
        print(f"{k}: max_abs_err={err:.3e} rel_to_max={rel:.3e} {'ok' if ok else 'MISMATCH'}")
        bad += 0 if ok else 1
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--text", action="store_true", help="MODEL is HLO text")
    ap.add_argument("--inputs")
    ap.add_argument("--output")
    ap.add_argument("--print-hlo", action="store_true")
    ap.add_argument("--compare")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5,
                    help="absolute tolerance as a fraction of max|ref|")
    a = ap.parse_args(argv)
    proto = load_proto(a.model, a.text)
    if a.print_hlo:
        from jax._src.lib import xla_client as xc
        print(xc.XlaComputation(proto).as_hlo_text())
        return 0
    backend, exe = compile_proto(proto)
    outs = run(exe, backend, read_inputs(a.inputs))
    if a.output:
        np.savez(a.output, **{f"out_{i:03d}": o for i, o in enumerate(outs)})
    if a.compare:
        return compare(outs, a.compare, a.rtol, a.atol)
    return 0


if __name__ == "__main__":
    sys.exit(main())
