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
# ratio opt/verify of the medians; then the same for the CPU time of each process (user +
# system, all its threads, from bash's `time`), which other load on the machine disturbs
# much less than wall time (bash reports it to the millisecond); the CPU time of one run
# is sampled coarsely by the kernel (single runs of verify read 0-60 ms for a ~10 ms
# job), so it is also measured over batches of RUNS runs in one `time` (batches of the two
# commands alternating, twice each), whose per-run average is what the CPU ratio should be
# read from; and, with valgrind installed, the instructions each process executes. Nothing
# here asserts the target.
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
# CPU time (user + system) of one command, in microseconds, via bash's `time` builtin.
cpu_us() {
  local TIMEFORMAT='%3U %3S' t
  t=$({ time "$@" >/dev/null; } 2>&1)
  awk '{ printf "%d", ($1 + $2) * 1e6 }' <<<"$t"
}
# Warm the page cache and check both commands succeed.
"$bin" verify "$file"
"$bin" opt -O2 "$file" -o "$out"

verify_ns=()
opt_ns=()
verify_cpu=()
opt_cpu=()
for _ in $(seq "$runs"); do
  t0=$(now_ns); "$bin" verify "$file"; t1=$(now_ns)
  "$bin" opt -O2 "$file" -o "$out"; t2=$(now_ns)
  verify_ns+=($((t1 - t0)))
  opt_ns+=($((t2 - t1)))
done
# CPU times in a second interleaved loop (measuring them adds a subshell per run, which
# the wall times above do not include).
for _ in $(seq "$runs"); do
  verify_cpu+=($(($(cpu_us "$bin" verify "$file") * 1000)))
  opt_cpu+=($(($(cpu_us "$bin" opt -O2 "$file" -o "$out") * 1000)))
done

# CPU time (user + system) of `runs` runs of a command in one batch, in microseconds.
batch_cpu_us() {
  local TIMEFORMAT='%3U %3S' t
  t=$({ time (for _ in $(seq "$runs"); do "$@" >/dev/null; done); } 2>&1)
  awk '{ printf "%d", ($1 + $2) * 1e6 }' <<<"$t"
}
batch_v=0
batch_o=0
for _ in 1 2; do
  batch_v=$((batch_v + $(batch_cpu_us "$bin" verify "$file")))
  batch_o=$((batch_o + $(batch_cpu_us "$bin" opt -O2 "$file" -o "$out")))
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
read -r vc_med vc_min <<<"$(stat_ms "${verify_cpu[@]}")"
read -r oc_med oc_min <<<"$(stat_ms "${opt_cpu[@]}")"
printf '%-10s %10s %10s\n' "CPU time" "median ms" "min ms"
printf '%-10s %10s %10s\n' "verify" "$vc_med" "$vc_min"
printf '%-10s %10s %10s\n' "opt -O2" "$oc_med" "$oc_min"
awk -v o="$oc_med" -v v="$vc_med" -v om="$oc_min" -v vm="$vc_min" 'BEGIN {
  printf "CPU ratio opt/verify: %.2f (median), %.2f (min)\n", o / v, om / vm }'
awk -v o="$batch_o" -v v="$batch_v" -v n="$runs" 'BEGIN {
  printf "CPU time per run over batches of %d: verify %.2f ms, opt -O2 %.2f ms, ratio %.2f\n",
    n, v / (2 * n) / 1e3, o / (2 * n) / 1e3, o / v }'

# Instructions executed by each process (valgrind's callgrind, when installed): unlike
# time, other load on the machine does not change them, so they show whether a change
# made the work itself smaller. They leave out what the kernel does for the process
# (page faults, the output file), which wall time includes.
if command -v valgrind >/dev/null; then
  instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
      awk '/refs:/ { gsub(",", "", $NF); print $NF }'
  }
  vi=$(instructions "$bin" verify "$file")
  oi=$(instructions "$bin" opt -O2 "$file" -o "$out")
  awk -v o="$oi" -v v="$vi" 'BEGIN {
    printf "instructions: verify %.1fM, opt -O2 %.1fM, ratio %.2f\n", v / 1e6, o / 1e6, o / v }'
fi
