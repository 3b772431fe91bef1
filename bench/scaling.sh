#!/usr/bin/env bash
# How `neuronc-rs opt -O2` scales with program size, against `verify` on the same program
# in the same run: for each synthetic shape of bench/scaling_gen.py at N, 2N and 4N, the
# ratio opt/verify and how much opt grew per doubling. A pass that is linear keeps the
# ratio flat and the growth near 2; a quadratic one shows growth near 4 and a rising ratio.
#
# Usage: bench/scaling.sh [SHAPE:N ...]   (default: every shape at its default N)
# Set NEURONC_BIN to use an existing binary instead of building target/release/neuronc-rs.
# Counts instructions with valgrind (callgrind) when installed, so other load on the
# machine does not matter; otherwise CPU time (user + system, median of 3). Nothing here
# asserts a target.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NEURONC_BIN:-target/release/neuronc-rs}
if [ -z "${NEURONC_BIN:-}" ]; then
  cargo build --release --quiet -p neuronc --bin neuronc-rs
fi
shapes=("$@")
if [ ${#shapes[@]} -eq 0 ]; then
  shapes=(calls:300 nested_calls:300 chain:3000 fanout:1000 fanin_dense:2000 mlp:40
    whiles:300 wide_sig:500 concat:200 reduces:200 transposes:50)
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/scaling.XXXXXX")
trap 'rm -rf "$dir"' EXIT

if command -v valgrind >/dev/null; then
  unit="instructions (M)"
  cost() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
      awk '/refs:/ { gsub(",", "", $NF); printf "%.1f", $NF / 1e6 }'
  }
else
  unit="CPU ms (median of 3)"
  cost() {
    local TIMEFORMAT='%3U %3S' t s=()
    for _ in 1 2 3; do
      t=$({ time "$@" >/dev/null; } 2>&1)
      s+=("$(awk '{ printf "%.1f", ($1 + $2) * 1000 }' <<<"$t")")
    done
    printf '%s\n' "${s[@]}" | sort -n | sed -n 2p
  }
fi

printf '%-14s %7s %12s %12s %7s %8s   [%s]\n' shape N verify "opt -O2" ratio growth "$unit"
for item in "${shapes[@]}"; do
  shape=${item%%:*}
  n=${item#*:}
  prev=""
  for m in 1 2 4; do
    size=$((n * m))
    f="$dir/$shape$size.mlir"
    python3 bench/scaling_gen.py "$shape" "$size" >"$f"
    v=$(cost "$bin" verify "$f")
    o=$(cost "$bin" opt -O2 "$f" -o "$dir/out.mlir")
    growth=$(awk -v o="$o" -v p="$prev" 'BEGIN { if (p == "") print "-"; else printf "%.2f", o / p }')
    awk -v s="$shape" -v n="$size" -v v="$v" -v o="$o" -v g="$growth" \
      'BEGIN { printf "%-14s %7d %12.1f %12.1f %7.2f %8s\n", s, n, v, o, o / v, g }'
    prev=$o
  done
done
