#!/usr/bin/env bash
# Predicted training throughput per NeuronCore for a BERT-large training step against the
# published trn1.32xlarge figure.
#
# Usage: bench/bert_large_throughput.sh [FILE] [TARGET]
#   FILE    default fixtures/models/bert_large_train_step.mlir (torch_xla 2.9 trace made by
#           fixtures/gen/torch_train_step.py bert_large: 24 layers, hidden 1024, batch 8,
#           seq 128, AdamW)
#   TARGET  default trn1
# Compiles with --auto-cast matmult (BF16 matmuls, as the published run), reads
# predicted_time_s from report.json and the batch from the manifest's first input
# (the largest rank-2 integer input, input_ids [batch, seq]), and prints sequences/s per core and the ratio to the
# published figure: 3,826.6 seq/s on one trn1.32xlarge (32 NeuronCores, data parallel,
# BF16) = 119.6 seq/s per core (neuron-facts.md, performance table). Target: 0.5x-2x.
# Nothing here asserts; it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-fixtures/models/bert_large_train_step.mlir}
target=${2:-trn1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo build --release --quiet -p neuronc --bin neuronc-rs
target/release/neuronc-rs compile "$file" -o "$out" --target "$target" --auto-cast matmult
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
report = json.load(open(f"{d}/report.json"))
manifest = json.load(open(f"{d}/manifest.json"))
inputs = manifest["inputs"]
# input_ids: the largest rank-2 integer input ([batch, seq]; the [1, 512] position-id
# buffer is smaller).
ints = [i for i in inputs if i["dtype"].startswith(("i", "s", "u")) and len(i["shape"]) == 2]
ids = max(ints, key=lambda i: i["shape"][0] * i["shape"][1])
batch = ids["shape"][0]
t = report["predicted_time_s"]
per_core = batch / t
published = 3826.6 / 32
print(f"batch {batch}, predicted step {t * 1e3:.2f} ms (roofline {report['roofline_time_s'] * 1e3:.2f} ms)")
print(f"predicted {per_core:.1f} seq/s per NeuronCore; published {published:.1f} seq/s per core")
print(f"ratio predicted/published: {per_core / published:.2f} (target 0.5-2.0)")
PY
