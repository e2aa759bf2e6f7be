"""Which decoder layers' attention best predicts the visual tokens a decoding step needs (issue: focal pruning).

On held-out synthetic lines (never the evaluation set), the CTC head's own best path says where each character
sits among the visual tokens (only lines the CTC head reads exactly are used). A layer "finds" character i when
that visual token is among the top K of its text->visual attention at the step that predicts character i
(K = the share kept, of the line's visual tokens). Recall is reported for every layer and every pair of layers
(their mean attention), at several shares; the best pair becomes the bundle's focal layers.

    /usr/bin/python3 training/focal_layers.py --ckpt training/checkpoints/specula-line-base.pt --out training/focal.json
"""
import argparse
import itertools
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from data import collate, held_out  # noqa: E402
from model import ctc_alignment, load_model  # noqa: E402

SHARES = (0.05, 0.1, 0.2)


@torch.no_grad()
def attentions(model, pixels, widths, tokens):
    """Teacher-forced pass returning every layer's head-mean text->visual attention [L,B,T,V] and CTC logits."""
    layers = tuple(range(len(model.layers)))
    x, nv, vm, probs = model.prefix_pass(pixels, widths, tokens, layers)
    maps = [probs[i][:, :, nv:, :nv].mean(1) for i in layers]
    ctc = model.ctc_head(model.ln_f(x[:, :nv]))
    return torch.stack(maps), ctc, vm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--lines", type=int, default=160)
    ap.add_argument("--out", default="training/focal.json")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, st = load_model(args.ckpt)
    lines = held_out(args.lines)
    L = model.cfg.n_layers
    combos = [(i,) for i in range(L)] + list(itertools.combinations(range(L), 2))
    hits = {c: {s: 0 for s in SHARES} for c in combos}
    total = 0
    for start in range(0, len(lines), 16):
        batch = collate(lines[start : start + 16])
        maps, ctc, vm = attentions(model, batch["pixels"], batch["widths"], batch["tokens"])
        targets = [charset.encode(t)[:250] for t in batch["texts"]]
        align = ctc_alignment(ctc, vm, targets)
        real = vm.sum(1).long().tolist()
        for row, i, vpos in align:
            total += 1
            for c in combos:
                att = maps[list(c), row, i, : real[row]].mean(0)
                order = att.argsort(descending=True)
                for s in SHARES:
                    k = max(3, int(round(s * real[row])))
                    if vpos in order[:k].tolist():
                        hits[c][s] += 1
    recall = {"+".join(map(str, c)): {str(s): hits[c][s] / max(1, total) for s in SHARES} for c in combos}
    pairs = [c for c in combos if len(c) == 2]
    best = max(pairs, key=lambda c: sum(hits[c].values()))
    report = {"characters": total, "lines": len(lines), "recall": recall, "best": list(best), "checkpointStep": st.get("step")}
    json.dump(report, open(args.out, "w"), indent=1)
    for name, r in recall.items():
        print(f"layers {name:5s} " + "  ".join(f"top {int(float(s) * 100)}%: {v:.3f}" for s, v in r.items()))
    print(f"best pair: {best} over {total} characters; written to {args.out}")


if __name__ == "__main__":
    main()
