#!/usr/bin/env bash
# Whole-process speed of `neuronc-rs opt -O2` against `neuronc-rs verify` (issue 4:
# opt -O2 should take at most 2x the time of verify on the BERT-base training step).
#
# Usage: bench/opt_speed.sh [FILE] [RUNS]
#   FILE  default fixtures/models/bert_base_train_step.mlir
#   RUNS  runs of each command, interleaved (default 5); medians are reported
# Set NEURONC_BIN to time an existing binary instead of building target/release/neuronc-rs.
# Prints the median wall time of both processes (the opt output goes to a temporary file,
# so writing it is included), the minimum as well (least disturbed by other load), and the
# ratio opt/verify of the medians. Nothing here asserts the target.
set -euo pipefail
cd "$(dirname "$0")/.."

file=${1:-fixtures/models/bert_base_train_step.mlir}
runs=${2:-5}
bin=${NEURONC_BIN:-target/release/neuronc-rs}
if [ -z "${NEURONC_BIN:-}" ]; then
  cargo build --release --quiet -p neuronc --bin neuronc-rs
fi
out=$(mktemp "${TMPDIR:-/tmp}/opt_speed.XXXXXX.mlir")
trap 'rm -f "$out"' EXIT

now_ns() { date +%s%N; }
# Warm the page cache and check both commands succeed.
"$bin" verify "$file"
"$bin" opt -O2 "$file" -o "$out"

verify_ns=()
opt_ns=()
for _ in $(seq "$runs"); do
  t0=$(now_ns); "$bin" verify "$file"; t1=$(now_ns)
  "$bin" opt -O2 "$file" -o "$out"; t2=$(now_ns)
  verify_ns+=($((t1 - t0)))
  opt_ns+=($((t2 - t1)))
done

# median / min of a list of nanosecond counts, in milliseconds
stat_ms() {
  printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "%.1f %.1f", m / 1e6, a[1] / 1e6 }'
}
read -r v_med v_min <<<"$(stat_ms "${verify_ns[@]}")"
read -r o_med o_min <<<"$(stat_ms "${opt_ns[@]}")"
echo "file: $file ($runs runs each, interleaved)"
printf '%-10s %10s %10s\n' "" "median ms" "min ms"
printf '%-10s %10s %10s\n' "verify" "$v_med" "$v_min"
printf '%-10s %10s %10s\n' "opt -O2" "$o_med" "$o_min"
awk -v o="$o_med" -v v="$v_med" -v om="$o_min" -v vm="$v_min" 'BEGIN {
  printf "ratio opt/verify: %.2f (median), %.2f (min); target <= 2\n", o / v, om / vm }'
