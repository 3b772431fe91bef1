#!/usr/bin/env python3
"""Parse and verify StableHLO/MLIR text files with jaxlib's bundled MLIR.

Oracle tool for neuronc-rs tests: tells whether upstream MLIR accepts a file
(with the func, stablehlo, chlo, mhlo, sdy dialects registered, as jax does).

Usage:
  python tools/mlir_check.py FILE [FILE ...]        # '-' reads stdin
  python tools/mlir_check.py --print-generic FILE   # print back in generic form
  python tools/mlir_check.py --print-pretty FILE    # print back in custom (pretty) form
  options: --debug-info  keep/print locations (loc(...) / #loc aliases)
           --quiet       print nothing on success

Exit status: 0 if every file parses and verifies; 1 otherwise (the MLIR
diagnostic is printed to stderr, prefixed by the file name); 2 on bad usage.
Requirements: tools/requirements-oracle.txt (jax, jaxlib, numpy, ml_dtypes).
"""
import argparse
import sys


def make_context():
    """An MLIR context with the dialects jax registers (stablehlo, chlo, func, ...)."""
    from jax._src.interpreters import mlir as jax_mlir
    ctx = jax_mlir.make_ir_context()
    ctx.allow_unregistered_dialects = False
    return ctx


def parse_module(text, ctx):
    """Parse MLIR text in `ctx`; raises jaxlib.mlir.ir.MLIRError on failure."""
    from jaxlib.mlir import ir
    with ctx:
        return ir.Module.parse(text)


def read_input(path):
    if path == "-":
        return sys.stdin.read()
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="MLIR files ('-' for stdin)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--print-generic", action="store_true",
                   help="print each module back in generic op form")
    g.add_argument("--print-pretty", action="store_true",
                   help="print each module back in custom/pretty form")
    ap.add_argument("--debug-info", action="store_true",
                    help="print locations when printing")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    ctx = make_context()
    failed = 0
    for path in args.files:
        name = "<stdin>" if path == "-" else path
        try:
            text = read_input(path)
        except OSError as e:
            print(f"{name}: cannot read: {e}", file=sys.stderr)
            failed += 1
            continue
        try:
            module = parse_module(text, ctx)
            with ctx:
                ok = module.operation.verify()
        except Exception as e:  # MLIRError carries the diagnostics in str(e)
            print(f"{name}: error:\n{e}", file=sys.stderr)
            failed += 1
            continue
        if not ok:
            print(f"{name}: error: verification failed", file=sys.stderr)
            failed += 1
            continue
        if args.print_generic or args.print_pretty:
            with ctx:
                sys.stdout.write(module.operation.get_asm(
                    print_generic_op_form=args.print_generic,
                    enable_debug_info=args.debug_info))
        elif not args.quiet:
            print(f"{name}: ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
