#!/usr/bin/env bash
# Runs neuronc-ir's parser and verifier over StableHLO's own test files and prints the share
# of positive static-shape cases accepted and of expected-error cases rejected (cases are
# the chunks between `// -----` lines; dynamic-shape and quantized cases are counted as
# skipped; a panic is reported as a crash and fails the run).
#
# Usage: tools/stablehlo_conformance.sh [-v] [-f] FILE.mlir [FILE.mlir ...]
#        tools/stablehlo_conformance.sh [-v] [-f] --all [STABLEHLO_TESTS_DIR]
#   -v     list every miss (POS-UNPARSED, POS-REJECTED, NEG-ACCEPTED, NEG-OTHER-LINE)
#   -f     one line of counts per file
#   --all  the parser/verifier test files of a checkout's stablehlo/tests/ directory
#          (default /tmp/shlo_src/stablehlo/tests): those whose RUN line is a plain
#          `stablehlo-opt` (round trip, or -verify-diagnostics) over stablehlo ops:
#            ops_stablehlo ops_stablehlo_roundtrip ops_stablehlo_bounded_dynamism
#            ops_stablehlo_quantized ops_dot_general_algorithms ops_sparse future_type
#            print_stablehlo print_reduce print_while print_types_invalid
#            replica_groups_mesh_axes verify_*
#          Left out: pass tests (canonicalize, infer_*, ops_broadcasting,
#          ops_speculatability, stablehlo_complex_math_expander, transform_*, transforms/,
#          interpret/, vhlo/, chlo/), the interpreter dialect (ops_interpreter) and the CHLO
#          op tests (ops_chlo, ops_chlo_roundtrip; run them by name).
#          Known misses among the positives (by design): StableHLO's tests that break a spec
#          constraint its verifier does not implement (compare TOTALORDER on integers,
#          rng_bit_generator with a 2-D f32 state, stablehlo.return of values from a
#          function without results), `set_dimension_size` (not in the spec, dynamic) and
#          `index` element types (dynamic-shape operands).
#   A directory argument stands for its *.mlir files, e.g. a checkout's stablehlo/testdata
#   (every file is a positive case).
set -euo pipefail
verbose=""
per_file=""
all=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -v) verbose=1; shift ;;
    -f) per_file=1; shift ;;
    --all) all=1; shift ;;
    *) break ;;
  esac
done
if [[ -n "$all" ]]; then
  dir="${1:-/tmp/shlo_src/stablehlo/tests}"
  set --
  for n in ops_stablehlo ops_stablehlo_roundtrip ops_stablehlo_bounded_dynamism \
    ops_stablehlo_quantized ops_dot_general_algorithms ops_sparse future_type \
    print_stablehlo print_reduce print_while print_types_invalid replica_groups_mesh_axes; do
    set -- "$@" "$dir/$n.mlir"
  done
  set -- "$@" "$dir"/verify_*.mlir
fi
[[ $# -ge 1 ]] || { echo "usage: $0 [-v] [-f] (--all [DIR] | FILE.mlir...)" >&2; exit 2; }
files=""
for f in "$@"; do files="${files:+$files:}$(realpath "$f")"; done
cd "$(dirname "$0")/.."
STABLEHLO_VERIFY_TESTS="$files" STABLEHLO_VERIFY_VERBOSE="$verbose" \
  STABLEHLO_VERIFY_PER_FILE="$per_file" \
  cargo test -q -p neuronc-ir --test verify_conformance -- --nocapture 2>&1 \
  | grep -E '^(POS-|NEG-|CRASH|file |positive|expected-error|skipped|crashes)'
