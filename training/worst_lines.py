"""Where the held-out error sits: per-line edits for greedy AR and joint decoding, how much of the corpus CER the
worst lines carry, and a contact sheet of them (the crops the model saw), to tell model errors from lines that
the generator degraded past reading.

  /usr/bin/python3 training/worst_lines.py --ckpt training/checkpoints/specula-line-base.pt --sheet /tmp/worst.png
"""
import argparse
import os
import sys

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from data import collate, held_out  # noqa: E402
from joint import joint_decode  # noqa: E402
from metrics import edit_distance, norm  # noqa: E402
from model import greedy_decode, load_model  # noqa: E402


@torch.no_grad()
def read_all(model, lines, ctc_weight: float, batch: int = 25):
    ar, joint = [], []
    for s in range(0, len(lines), batch):
        b = collate(lines[s: s + batch])
        out, _, _ = greedy_decode(model, b["pixels"], b["widths"], 160, charset.BOS, charset.EOS)
        ar += [charset.decode(r) for r in out.tolist()]
        joint += [charset.decode(r) for r in joint_decode(model, b["pixels"], b["widths"], ctc_weight).tolist()]
    return ar, joint


def concentration(name: str, hyps, refs, show: int):
    edits = [edit_distance(norm(h), norm(r)) for h, r in zip(hyps, refs)]
    total, chars = sum(edits), sum(max(1, len(norm(r))) for r in refs)
    order = sorted(range(len(refs)), key=lambda i: -edits[i])
    print(f"{name}: CER {total / chars:.4f} ({total} edits over {chars} characters); "
          f"{sum(e == 0 for e in edits)} of {len(refs)} lines exact")
    for k in (1, 5, 10, 20):
        top = sum(edits[i] for i in order[:k])
        print(f"  the worst {k:2d} lines carry {top / max(1, total):5.1%} of the edits; "
              f"without them CER {(total - top) / max(1, chars - sum(len(norm(refs[i])) for i in order[:k])):.4f}")
    for i in order[:show]:
        print(f"  line {i:3d}: {edits[i]:3d} edits / {len(norm(refs[i])):3d} | {refs[i]!r}\n{'':24}-> {hyps[i]!r}")
    return order


def sheet(lines, order, path: str, width: int = 900, row: int = 64):
    crops = []
    for i in order:
        a = (255 - np.clip(lines[i][0] * 255, 0, 255)).astype(np.uint8)  # ink 1 -> black
        im = Image.fromarray(a)
        crops.append(im.resize((min(width, im.width * row // im.height), row)))
    out = Image.new("L", (width, (row + 4) * len(crops)), 128)
    for k, im in enumerate(crops):
        out.paste(im, (0, k * (row + 4)))
    out.save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--lines", type=int, default=200)
    ap.add_argument("--seed", type=int, default=987654, help="the exporter's and train.py's held-out seed")
    ap.add_argument("--ctc-weight", type=float, default=0.7, help="the bundle records its own (config.json jointCtcWeight)")
    ap.add_argument("--show", type=int, default=12)
    ap.add_argument("--sheet", help="write the worst lines' crops (joint's order) to this PNG")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, st = load_model(args.ckpt)
    lines = held_out(args.lines, seed=args.seed)
    refs = [t for _, t in lines]
    ar, joint = read_all(model, lines, args.ctc_weight)
    print(f"step {st.get('step')}, {len(lines)} held-out lines (seed {args.seed})")
    concentration("greedy AR", ar, refs, args.show)
    order = concentration(f"joint (CTC weight {args.ctc_weight})", joint, refs, args.show)
    if args.sheet:
        sheet(lines, order[: args.show], args.sheet)
        print(f"contact sheet of joint's worst {args.show}: {args.sheet}")


if __name__ == "__main__":
    main()
