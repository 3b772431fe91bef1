#!/usr/bin/env python3
"""How the transpose bar depends on batch and sequence length (issue 4: on BERT-base and
LayoutLM inference, `transpose_bytes` at most 5% of `matmul_operand_bytes`).

Traces BERT-base and LayoutLM-base (random weights from the default configs, nothing
downloaded) at several (batch, sequence) shapes, both ways torch users capture StableHLO
(torch.export + torch_xla's exporter, and torch_xla lazy tensors + xm.get_stablehlo), runs
`neuronc-rs explain --json` on each and prints per trace: kernels, transposes, transpose
bytes as a share of matmul operand bytes, the share the attention probabilities alone
would make if transposed once per layer (layers x batch x heads x seq^2 x 4 bytes), and
`compile`'s predicted time, with `--recompute-for-contraction=off`; then the same with
`=on` (the probabilities recomputed with keys on the partitions for P @ V instead of
transposed); then which of the two the default `=auto` takes (the recomputed plan when the
first exceeds 5% and the second does not).

Why that last column: softmax reduces the scores along the key axis, which is cheap on the
free axis, while probabilities @ V contracts over the key axis, which must lie on the
partitions. Keeping the keys on the partitions instead turns softmax's max and sum into
cross-partition reductions, which the cost model prices above one transpose
(passes/src/neuron/layout_spec.rs); NKI's own attention kernels transpose the
probabilities too. So the probability transpose grows as batch x seq^2 while the weights
(most matmul operand bytes at small shapes) stay fixed, and the 5% bar holds only at small
batch x seq without it. `--recompute-for-contraction` removes that transpose at every
shape, at the price of recomputing the scores' elementwise chain in the other layout;
the predicted-time columns show what that costs. This script shows both.

Needs the fixture-generation python (torch, torch_xla, transformers:
fixtures/gen/requirements-gen.txt) and a release build. Prints; asserts nothing.
Usage: PJRT_DEVICE=CPU bench/transposes_by_shape.py [--bin target/release/neuronc-rs]
           [--shapes 1x128,4x128,1x512] [--capture export,lazy] [--models bert,layoutlm]
           [--keep DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("PJRT_DEVICE", "CPU")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures", "gen"))


def build(model, batch, seq):
    """(config, wrapped eval model, inputs) with the fixture generator's input helpers."""
    import torch
    import torch_export_infer as te
    import transformers as T
    torch.manual_seed(0)
    cfg = T.LayoutLMConfig(num_labels=2) if model == "layoutlm" else T.BertConfig(num_labels=2)
    cfg._attn_implementation = "eager"
    cls = T.LayoutLMForSequenceClassification if model == "layoutlm" else T.BertForSequenceClassification
    m = te.Logits(cls(cfg)).eval()
    ids, mask, tt = te.text_inputs(cfg.vocab_size, batch, seq)
    if model == "layoutlm":
        return cfg, m, (ids, te.bbox_inputs(batch, seq, cfg.max_2d_position_embeddings), mask, tt)
    return cfg, m, (ids, mask, tt)


def capture(how, m, inputs):
    import torch
    if how == "export":
        from torch_xla.stablehlo import exported_program_to_stablehlo
        ep = torch.export.export(m, inputs)
        return exported_program_to_stablehlo(ep).get_stablehlo_text("forward")
    import torch_xla
    import torch_xla.core.xla_model as xm
    dev = torch_xla.device()
    xm_model = m.to(dev)
    xin = [i.to(dev) for i in inputs]
    torch_xla.sync()
    with torch.no_grad():
        outs = list(xm_model(*xin))
    return xm.get_stablehlo(outs)


def explain(binary, path, extra=()):
    out = subprocess.run([binary, "explain", "--json", path, *extra], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def predicted_ms(binary, path, extra=()):
    """`compile`'s predicted time in ms (its report.json), in a scratch directory."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "compile", "--no-cache", path, "-o", out, *extra], check=True,
                       capture_output=True, text=True)
        with open(os.path.join(out, "report.json")) as f:
            return 1e3 * json.load(f)["predicted_time_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "neuronc-rs"))
    ap.add_argument("--shapes", default="1x128,4x128,1x256,1x512")
    ap.add_argument("--capture", default="export,lazy")
    ap.add_argument("--models", default="bert,layoutlm")
    ap.add_argument("--keep", help="write the traces to this directory (kept) instead of a temporary one")
    args = ap.parse_args()
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    print(f"{'trace':26} {'kernels':>7} {'transp':>6} {'transpose %':>11} {'probs %':>8} "
          f"{'ms':>7} | {'recompute: transp':>17} {'transpose %':>11} {'ms':>7} | auto")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        os.makedirs(tmp, exist_ok=True)
        for model in args.models.split(","):
            for how in args.capture.split(","):
                for batch, seq in shapes:
                    cfg, m, inputs = build(model, batch, seq)
                    path = os.path.join(tmp, f"{model}_{how}_{batch}x{seq}.mlir")
                    with open(path, "w") as f:
                        f.write(capture(how, m, inputs))
                    off = ["--recompute-for-contraction=off"]
                    d = explain(args.bin, path, off)
                    flag = ["--recompute-for-contraction=on"]
                    auto = explain(args.bin, path).get("recompute") or {}
                    r = explain(args.bin, path, flag)
                    mm = max(1, d["matmul_operand_bytes"])
                    probs = (cfg.num_hidden_layers * batch * cfg.num_attention_heads
                             * seq * seq * 4)
                    name = f"{model} {how} b{batch} s{seq}"
                    print(f"{name:26} {d['kernels']:7d} {d['transposes']:6d} "
                          f"{100 * d['transpose_bytes'] / mm:10.2f}% {100 * probs / mm:7.2f}% "
                          f"{predicted_ms(args.bin, path, off):7.3f} | {r['transposes']:17d} "
                          f"{100 * r['transpose_bytes'] / max(1, r['matmul_operand_bytes']):10.2f}% "
                          f"{predicted_ms(args.bin, path, flag):7.3f} | "
                          f"{'on' if auto.get('applied') else 'off'}", flush=True)

if __name__ == "__main__":
    main()
