#!/usr/bin/env bash
# Runs neuronc-ir's verifier over StableHLO verifier test files and prints the share of
# positive static-shape cases accepted and of expected-error cases rejected.
# Usage: tools/stablehlo_conformance.sh [-v] FILE.mlir [FILE.mlir ...]
#   (e.g. a checkout's stablehlo/tests/ops_stablehlo.mlir; -v lists every miss)
set -euo pipefail
verbose=""
if [[ "${1:-}" == "-v" ]]; then verbose=1; shift; fi
[[ $# -ge 1 ]] || { echo "usage: $0 [-v] FILE.mlir..." >&2; exit 2; }
files=""
for f in "$@"; do files="${files:+$files:}$(realpath "$f")"; done
cd "$(dirname "$0")/.."
STABLEHLO_VERIFY_TESTS="$files" STABLEHLO_VERIFY_VERBOSE="$verbose" \
  cargo test -q -p neuronc-ir --test verify_conformance -- --nocapture 2>&1 \
  | grep -E '^(POS-|NEG-|positive|expected-error|skipped)'
