#!/usr/bin/env python3
"""Runs `neuronc-rs run FILE` over StableHLO's self-checking testdata corpus.

Usage: tools/stablehlo_testdata.py [-v] [-j N] [--timeout S] [--bin PATH] [--tsv OUT]
                                   [--opt FLAGS] [--engine sim] DIR_OR_FILE [...]

Every `*.mlir` under each DIR (recursively; or each FILE given) is run with a per-case
timeout (default 20 s) and N cases at a time (default 2). Files using quantized types
(`!quant.`) and files without a `custom_call @check.*` (e.g. `dynamic/`, which take
arguments) are skipped and counted. Each case lands in one bucket:

  pass          exit 0 (every `check.*` custom_call held)
  check-failed  exit 1, the interpreter reported a failing `check.*`
  parse/verify  exit 1, the file did not parse or verify (a `FILE:L:C: error:` diagnostic)
  unsupported   exit 1, an op or custom_call target the interpreter does not implement
  runtime-error exit 1, any other interpreter error
  crash         exit code >= 101 (a Rust panic) or killed by a signal
  timeout       still running after the timeout

Prints the totals (with the pass rate over non-skipped files, and how many failures
carry an upstream `// RUN-DISABLED(reason)` marker), the slowest five cases, and with
-v every non-passing file grouped by the first line of its error message (digits
folded to `#`, check details cut). `--tsv OUT` writes `file<TAB>bucket<TAB>
seconds<TAB>first line` for every case (to diff two runs). `--opt -O2` first optimizes each
file with `neuronc-rs opt -O2` and runs the optimized text, so the files' own checks
validate the pass pipeline (an opt failure is bucket `opt-error`); `--engine sim` runs
the compiled engine program in the simulator instead of the interpreter. Exits 0. Python 3
stdlib only.
"""

import argparse
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

BUCKETS = [
    "pass",
    "check-failed",
    "parse/verify",
    "unsupported",
    "runtime-error",
    "opt-error",
    "crash",
    "timeout",
]
LOC_RE = re.compile(r"^\S+?:\d+:\d+: error: ")
INTERP_PREFIX = "neuronc-rs: error: interpreter: "


def default_bin():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, "target", "release", "neuronc-rs")


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, f) for f in names if f.endswith(".mlir")]
        else:
            files.append(p)
    return sorted(files)


DISABLED_RE = re.compile(r"//\s*RUN-DISABLED(\([^)]*\))?")


def inspect(path):
    """(why `path` is not run or None, upstream `RUN-DISABLED(...)` marker or "")."""
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = DISABLED_RE.search(text)
    disabled = "RUN-DISABLED" + (m.group(1) or "") if m else ""
    if "!quant." in text:
        return "quantized", disabled
    if "custom_call @check." not in text:
        return "no-check", disabled
    return None, disabled


def first_error_line(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l:
            return l.strip()
    return lines[0].strip() if lines else ""


def classify(code, stderr):
    """(bucket, first error line) of one finished run."""
    line = first_error_line(stderr)
    if code == 0:
        return "pass", ""
    if code < 0 or code >= 101:
        return "crash", line or f"exit code {code}"
    if LOC_RE.match(line):
        return "parse/verify", line
    if line.startswith(INTERP_PREFIX):
        rest = line[len(INTERP_PREFIX):]
        if rest.startswith("check.") and " failed" in rest:
            return "check-failed", line
        if rest.startswith("unsupported"):
            return "unsupported", line
    return "runtime-error", line


def group_key(bucket, line):
    key = LOC_RE.sub("error: ", line)
    key = key.replace(INTERP_PREFIX, "")
    if bucket == "check-failed":
        key = key.split(" failed", 1)[0] + " failed"
    key = re.sub(r"\d+", "#", key)
    return f"[{bucket}] {key[:160]}"


def optimize(binary, path, opt_flags, timeout):
    """Runs `neuronc-rs opt OPT_FLAGS PATH`; returns (optimized file, None) or (None, result
    fields) when opt itself fails (bucket `opt-error`, or `crash`/`timeout`)."""
    fd, out = tempfile.mkstemp(suffix=".mlir", prefix="shlo_opt_")
    os.close(fd)
    try:
        p = subprocess.run(
            [binary, "opt", *opt_flags.split(), path, "-o", out],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        os.unlink(out)
        return None, ("timeout", f"opt: timeout after {timeout:g} s")
    if p.returncode != 0:
        os.unlink(out)
        err = p.stderr.decode("utf-8", "replace")
        bucket = "crash" if p.returncode >= 101 or p.returncode < 0 else "opt-error"
        return None, (bucket, "opt: " + first_error_line(err))
    return out, None


def run_one(binary, path, timeout, opt_flags=None, engine=None):
    start = time.monotonic()
    target = path
    if opt_flags:
        target, failed = optimize(binary, path, opt_flags, timeout)
        if failed:
            return path, failed[0], time.monotonic() - start, failed[1]
    try:
        p = subprocess.run(
            [binary, "run", *(["--engine", engine] if engine else []), target],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
        secs = time.monotonic() - start
        bucket, line = classify(p.returncode, p.stderr.decode("utf-8", "replace"))
    except subprocess.TimeoutExpired:
        secs = time.monotonic() - start
        bucket, line = "timeout", f"timeout after {timeout:g} s"
    if target != path:
        os.unlink(target)
    return path, bucket, secs, line


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", metavar="DIR_OR_FILE")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--bin", default=default_bin())
    ap.add_argument("--tsv", metavar="OUT")
    ap.add_argument(
        "--opt",
        metavar="FLAGS",
        help="optimize first with `neuronc-rs opt FLAGS` (e.g. -O2) and run the result: "
        "translation validation of the pass pipeline by the files' own checks",
    )
    ap.add_argument(
        "--engine",
        metavar="ENGINE",
        help="`neuronc-rs run --engine ENGINE` (e.g. sim: the engine program in the "
        "simulator, checked by the files' own checks)",
    )
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"{args.bin} not found; run `cargo build --release -p neuronc`")

    files = collect(args.paths)
    info = {f: inspect(f) for f in files}
    skipped = defaultdict(int)
    for r, _ in info.values():
        if r:
            skipped[r] += 1
    todo = [f for f in files if info[f][0] is None]
    results = []
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = [
            ex.submit(run_one, args.bin, f, args.timeout, args.opt, args.engine)
            for f in todo
        ]
        for fut in cf.as_completed(futs):
            results.append(fut.result())
    results.sort()
    disabled = {f: info[f][1] for f in todo}
    report(results, skipped, disabled, args.verbose)
    if args.tsv:
        with open(args.tsv, "w", encoding="utf-8") as out:
            for path, bucket, secs, line in results:
                out.write(f"{os.path.basename(path)}\t{bucket}\t{secs:.3f}\t{line}\n")


def report(results, skipped, disabled, verbose):
    counts = defaultdict(int)
    for _, bucket, _, _ in results:
        counts[bucket] += 1
    total = len(results)
    rate = 100.0 * counts["pass"] / total if total else 0.0
    print(
        f"files: {total + sum(skipped.values())}  run: {total}  skipped: "
        f"{skipped['quantized']} quantized (`!quant.`), "
        f"{skipped['no-check']} without a `custom_call @check.*` (not self-checking)"
    )
    for b in BUCKETS:
        print(f"  {b:<14}{counts[b]:>6}")
    print(f"pass rate: {counts['pass']}/{total} = {rate:.2f}%")
    failing = [r[0] for r in results if r[1] != "pass"]
    n_dis = sum(1 for f in failing if disabled.get(f))
    print(
        f"  of the {len(failing)} not passing, {n_dis} are RUN-DISABLED upstream "
        "(StableHLO's own interpreter does not run them)"
    )
    print("slowest:")
    for path, bucket, secs, _ in sorted(results, key=lambda r: -r[2])[:5]:
        print(f"  {secs:8.2f} s  {bucket:<14}{os.path.basename(path)}")
    if not verbose:
        return
    groups = defaultdict(list)
    for path, bucket, _, line in results:
        if bucket != "pass":
            groups[group_key(bucket, line)].append(path)
    for key, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"\n{len(names):5}  {key}")
        names = sorted(names)
        for n in names:
            print(f"       {os.path.basename(n)}  {disabled.get(n, '')}".rstrip())


if __name__ == "__main__":
    main()
