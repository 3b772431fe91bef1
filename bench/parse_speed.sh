#!/usr/bin/env bash
# Parse-speed benchmark of `neuronc-rs verify` against jaxlib's MLIR parse + verify.
#
# Usage: bench/parse_speed.sh [FILE] [RUNS]
#   FILE  default fixtures/models/bert_base_train_step.mlir (else the largest .mlir
#         under fixtures/)
#   RUNS  best-of count (default 20)
# Python with jaxlib: $NEURONC_PYTHON, else .venv/bin/python, else /work/venv/bin/python.
# Prints MB/s of both, the time ratio ours/jaxlib (target <= 0.5), and the time ratio of
# a 10x larger module (10 renamed copies of the functions) to the original (target <= 11).
# Timings are measured side by side in one run; nothing here asserts them.
set -euo pipefail
cd "$(dirname "$0")/.."

file=${1:-fixtures/models/bert_base_train_step.mlir}
runs=${2:-20}
if [ ! -f "$file" ]; then
  file=$(find fixtures -name '*.mlir' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
fi

py=${NEURONC_PYTHON:-}
for cand in "$py" .venv/bin/python /work/venv/bin/python; do
  if [ -n "$cand" ] && [ -x "$cand" ]; then py=$cand; break; fi
done
if [ -z "$py" ] || [ ! -x "$py" ]; then
  echo "parse_speed: no python with jaxlib (set NEURONC_PYTHON or run .ci/run)" >&2
  exit 1
fi

cargo build --release --quiet -p neuronc --bin neuronc-rs
exec "$py" bench/parse_speed.py --bin target/release/neuronc-rs --runs "$runs" "$file"
