#!/usr/bin/env python3
"""Compile a StableHLO text module with XLA:CPU (via jaxlib) and run it.

Oracle tool for neuronc-rs tests.

Usage:
  python tools/xla_run.py FILE.mlir --inputs IN.npz --output OUT.npz [--entry main]
  python tools/xla_run.py FILE.mlir --random-inputs SEED [--save-inputs IN.npz] --output OUT.npz
  python tools/xla_run.py FILE.mlir --signature      # print argument/result types and exit

Inputs are read from IN.npz by keys arg_000, arg_001, ... in argument order
(dtype and shape must match the signature; an npz from fixtures/ that also
holds out_* keys is fine, those are ignored). Results are written to OUT.npz
as out_000, out_001, ... in result order (np.savez, uncompressed). `--output -`
prints a summary instead of writing.

--compare REF.npz compares the results with the out_* arrays of REF.npz and
prints max abs / max rel error per output; with --rtol/--atol it exits 1 when
any output is out of tolerance (np.allclose semantics, NaNs equal).

Element types: f16/bf16/f8* (ml_dtypes), f32, f64, i1 (bool), i8..i64,
ui8..ui64, complex<f32>/complex<f64>. Multi-result functions are fine (no
tuples). --entry NAME runs another public/private func.func of the module (it
is renamed to main before compiling).

Random inputs (--random-inputs SEED): floats uniform in [--float-lo,
--float-hi) (default [-1, 1)); signed/unsigned ints uniform in [0, --int-hi)
(default 4, small so they are valid indices); bools fair coin flips;
complex: real and imaginary parts as floats. Deterministic for a given seed.

Requirements: tools/requirements-oracle.txt (jax, jaxlib, numpy, ml_dtypes).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlir_check import make_context, parse_module, read_input  # noqa: E402


def np_dtype(mlir_elem):
    """numpy dtype for an MLIR element type string."""
    import ml_dtypes
    s = str(mlir_elem)
    table = {
        "f16": np.float16, "f32": np.float32, "f64": np.float64,
        "bf16": ml_dtypes.bfloat16, "i1": np.bool_,
        "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
        "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
        "si8": np.int8, "si16": np.int16, "si32": np.int32, "si64": np.int64,
        "complex<f32>": np.complex64, "complex<f64>": np.complex128,
        "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
        "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
        "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
        "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz,
        "i4": ml_dtypes.int4, "ui4": ml_dtypes.uint4,
        "f8E4M3": ml_dtypes.float8_e4m3, "f8E3M4": ml_dtypes.float8_e3m4,
        "f8E8M0FNU": ml_dtypes.float8_e8m0fnu, "f4E2M1FN": ml_dtypes.float4_e2m1fn,
        "f6E2M3FN": ml_dtypes.float6_e2m3fn, "f6E3M2FN": ml_dtypes.float6_e3m2fn,
        "i2": ml_dtypes.int2, "ui2": ml_dtypes.uint2,
    }
    if s not in table:
        raise SystemExit(f"xla_run: unsupported element type {s}")
    return np.dtype(table[s])


def signature(module, entry):
    """([(shape, dtype)] for args, [(shape, dtype)] for results) of func `entry`."""
    from jaxlib.mlir import ir
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        if ir.StringAttr(op.attributes["sym_name"]).value != entry:
            continue
        ft = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)

        def conv(t):
            try:
                rt = ir.RankedTensorType(t)
            except (ValueError, TypeError):
                raise SystemExit(f"xla_run: unsupported type {t} (only ranked tensors)")
            if not rt.has_static_shape:
                raise SystemExit(f"xla_run: dynamic shape {t} not supported")
            return tuple(rt.shape), np_dtype(rt.element_type)
        return [conv(t) for t in ft.inputs], [conv(t) for t in ft.results]
    raise SystemExit(f"xla_run: no func.func @{entry} in module")


def make_entry_main(module, entry, ctx):
    """Rename func @entry to @main (public) so XLA uses it as the entry point."""
    from jaxlib.mlir import ir
    if entry == "main":
        return
    with ctx:
        table = ir.SymbolTable(module.operation)
        body = module.body
        if entry not in table:
            raise SystemExit(f"xla_run: no func.func @{entry} in module")
        new_main = table[entry]
        if "main" in table:
            old_main = table["main"]
            ir.SymbolTable.replace_all_symbol_uses("main", "__xla_run_old_main", body.owner)
            ir.SymbolTable.set_symbol_name(old_main, "__xla_run_old_main")
        ir.SymbolTable.replace_all_symbol_uses(entry, "main", body.owner)
        ir.SymbolTable.set_symbol_name(new_main, "main")
        if "sym_visibility" in new_main.attributes:
            del new_main.attributes["sym_visibility"]


def random_inputs(arg_sig, seed, flo, fhi, ihi):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in arg_sig:
        if dt == np.bool_:
            a = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif np.issubdtype(dt, np.complexfloating):
            a = (rng.uniform(flo, fhi, size=shape) + 1j * rng.uniform(flo, fhi, size=shape)).astype(dt)
        elif dt.kind in "iu" or dt.name in ("int4", "uint4"):
            a = rng.integers(0, ihi, size=shape).astype(dt)
        else:
            a = rng.uniform(flo, fhi, size=shape).astype(np.float32).astype(dt)
        out.append(np.asarray(a, dtype=dt).reshape(shape))
    return out


def save_case(out_dir, name, text, args):
    """Runs StableHLO `text` on `args` with XLA:CPU and writes NAME.mlir (the text) and
    NAME.npz (arg_000.. = args, out_000.. = XLA's results) to `out_dir`: one bit-exact
    case for the interpreter's tests. Returns the results."""
    res = compile_and_run(text, args)
    with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
        f.write(text)
    d = {f"arg_{i:03d}": a for i, a in enumerate(args)}
    d.update({f"out_{i:03d}": np.asarray(r) for i, r in enumerate(res)})
    np.savez_compressed(os.path.join(out_dir, name + ".npz"), **d)
    print(name, len(res), "outputs")
    return res


def compile_and_run(text, args):
    """Compile StableHLO `text` for XLA:CPU and run it on numpy `args`."""
    import jax
    from jax._src import xla_bridge as xb
    from jax._src.lib import _jax as xc
    # jax's CPU LAPACK custom calls (lapack_*_ffi) read function pointers that jax
    # fills only when it lowers a linalg op: a fresh process must fill them first.
    from jax._src.lib import lapack
    lapack._lapack.initialize()
    backend = xb.get_backend("cpu")
    dev = backend.devices()[0]
    exe = backend.compile_and_load(text, backend.devices()[:1], xc.CompileOptions())
    old_x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # else device_put narrows i64/f64 to 32 bits
    try:
        bufs = [jax.device_put(a, dev) for a in args]
        res = exe.execute(bufs)
        return [np.asarray(r) for r in res]
    finally:
        jax.config.update("jax_enable_x64", old_x64)


def compare(outs, ref, rtol, atol):
    bad = 0
    for i, o in enumerate(outs):
        k = f"out_{i:03d}"
        if k not in ref:
            print(f"{k}: missing in reference")
            bad += 1
            continue
        r = ref[k]
        if r.dtype.kind == "V" and r.dtype.itemsize == o.dtype.itemsize:
            r = r.view(o.dtype)  # bf16/f8 come back from npz as raw void bytes
        if r.shape != o.shape or r.dtype != o.dtype:
            print(f"{k}: shape/dtype mismatch {o.shape} {o.dtype} vs ref {r.shape} {r.dtype}")
            bad += 1
            continue
        if o.dtype == np.bool_ or o.dtype.kind in "iu":
            ndiff = int(np.sum(o != r))
            print(f"{k}: {o.dtype}{list(o.shape)} mismatches={ndiff}")
            bad += ndiff != 0
            continue
        ct = np.complex128 if np.issubdtype(o.dtype, np.complexfloating) else np.float64
        a, b = o.astype(ct), r.astype(ct)
        fin = np.isfinite(a) & np.isfinite(b)
        nanmis = int(np.sum(np.isnan(a) != np.isnan(b)))
        d = np.abs(a - b)[fin]
        mabs = float(d.max()) if d.size else 0.0
        mrel = float((d / np.maximum(np.abs(b[fin]), 1e-30)).max()) if d.size else 0.0
        line = f"{k}: {o.dtype}{list(o.shape)} max_abs={mabs:.3e} max_rel={mrel:.3e} nan_mismatch={nanmis}"
        if rtol is not None or atol is not None:
            ok = np.allclose(a, b, rtol=rtol or 0.0, atol=atol or 0.0, equal_nan=True)
            line += " ok" if ok else " FAIL"
            bad += not ok
        print(line)
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", help="StableHLO text file ('-' for stdin)")
    ap.add_argument("--inputs", help="npz with arg_000, arg_001, ...")
    ap.add_argument("--output", help="npz to write out_000, ... ('-' = print summary)")
    ap.add_argument("--entry", default="main")
    ap.add_argument("--random-inputs", type=int, metavar="SEED")
    ap.add_argument("--save-inputs", metavar="IN.npz")
    ap.add_argument("--float-lo", type=float, default=-1.0)
    ap.add_argument("--float-hi", type=float, default=1.0)
    ap.add_argument("--int-hi", type=int, default=4)
    ap.add_argument("--signature", action="store_true")
    ap.add_argument("--compare", metavar="REF.npz")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--atol", type=float)
    args = ap.parse_args(argv)

    text = read_input(args.file)
    ctx = make_context()
    try:
        module = parse_module(text, ctx)
    except Exception as e:
        print(f"xla_run: parse error:\n{e}", file=sys.stderr)
        return 1
    with ctx:
        arg_sig, res_sig = signature(module, args.entry)
        if args.signature:
            for i, (s, d) in enumerate(arg_sig):
                print(f"arg_{i:03d}: {d.name}{list(s)}")
            for i, (s, d) in enumerate(res_sig):
                print(f"out_{i:03d}: {d.name}{list(s)}")
            return 0
        if args.entry != "main":
            make_entry_main(module, args.entry, ctx)
            text = module.operation.get_asm(enable_debug_info=True)

    if args.random_inputs is not None:
        inputs = random_inputs(arg_sig, args.random_inputs, args.float_lo,
                               args.float_hi, args.int_hi)
        if args.save_inputs:
            np.savez(args.save_inputs, **{f"arg_{i:03d}": a for i, a in enumerate(inputs)})
    elif args.inputs:
        with np.load(args.inputs) as z:
            inputs = []
            for i, (shape, dt) in enumerate(arg_sig):
                k = f"arg_{i:03d}"
                if k not in z:
                    raise SystemExit(f"xla_run: {args.inputs} has no {k}")
                a = z[k]
                if a.dtype != dt:
                    # npz may store bf16 etc. as raw void/uint bytes: reinterpret same-size data
                    if a.dtype.itemsize == dt.itemsize and a.dtype.kind == "V":
                        a = a.view(dt)
                    else:
                        raise SystemExit(f"xla_run: {k} has dtype {a.dtype}, expected {dt}")
                if tuple(a.shape) != shape:
                    raise SystemExit(f"xla_run: {k} has shape {a.shape}, expected {shape}")
                inputs.append(a)
    elif not arg_sig:
        inputs = []
    else:
        raise SystemExit("xla_run: need --inputs or --random-inputs")

    outs = compile_and_run(text, inputs)
    if args.output and args.output != "-":
        np.savez(args.output, **{f"out_{i:03d}": o for i, o in enumerate(outs)})
    elif args.output == "-":
        for i, o in enumerate(outs):
            print(f"out_{i:03d}: {o.dtype}{list(o.shape)}")
    rc = 0
    if args.compare:
        with np.load(args.compare) as z:
            ref = {k: z[k] for k in z.files}
        rc = 1 if compare(outs, ref, args.rtol, args.atol) else 0
    return rc


if __name__ == "__main__":
    sys.exit(main())
