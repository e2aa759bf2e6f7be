"""The mean of two or more weights-only checkpoints of one run's line (train.py's weights.pt format): each float
tensor averaged, everything else (step, lines seen, config) taken from the last. Checkpoints along one training
path, averaged, keep what each learnt better than either alone (Izmailov et al. 2018, "Averaging Weights Leads to
Wider Optima").

    /usr/bin/python3 training/average.py --out RUN/weights.pt A.pt B.pt [C.pt ...]
"""
import argparse
import os

import torch


def average(paths: list[str]) -> dict:
    ckpts = [torch.load(p, map_location="cpu") for p in paths]
    keys = ckpts[0]["model"].keys()
    if any(c["model"].keys() != keys for c in ckpts):
        raise SystemExit("the checkpoints hold different tensors: not one model")
    model = {}
    for k in keys:
        ts = [c["model"][k] for c in ckpts]
        model[k] = (sum(t.float() for t in ts) / len(ts)).to(ts[0].dtype) if ts[0].is_floating_point() else ts[-1]
    out = dict(ckpts[-1])
    out["model"] = model
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("ckpts", nargs="+")
    args = ap.parse_args()
    if len(args.ckpts) < 2:
        raise SystemExit("name two checkpoints or more")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save(average(args.ckpts), args.out)
    print(f"{args.out}: the mean of {', '.join(args.ckpts)}")


if __name__ == "__main__":
    main()
