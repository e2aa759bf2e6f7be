"""Fit the script gate: a logistic probe on log(mean CTC distribution) that says a line is in a script the model lacks.

Inputs are script_lines.py's lines and script_features.mjs's features of them (the engine's own vision pass):

    /usr/bin/python3 training/script_lines.py --out /tmp/sl-train --n 6000 --seed 1
    /usr/bin/python3 training/script_lines.py --out /tmp/sl-test --n 2000 --seed 2
    node training/script_features.mjs /tmp/sl-train > /tmp/sl-train/features.jsonl   (and /tmp/sl-test)
    /usr/bin/python3 training/script_lines.py --out /tmp/sl-train2 --n 8000 --seed 3   (features likewise)
    /usr/bin/python3 training/script_gate.py --train /tmp/sl-train /tmp/sl-train2 --test /tmp/sl-test [--write models/specula-line-base]

It prints the held-out synthetic lines' rates per script and, with --write, puts the probe into the bundle's
config.json as `scriptGate` (engine/ctc/script-gate.ts reads it). The probe is small (one weight per vocabulary entry),
so it is fitted here in numpy, on the CPU, in seconds.
"""
import argparse
import json
import os

import numpy as np

FLOOR = 1e-4
# Fewer real frames than this (a line of a few characters) and the gate does not judge: on held-out synthetic lines
# under 40 frames it caught 82-87% of the other scripts' lines and flagged 18-38% of receipt lines, against 94-99%
# and 0-14% above.
MIN_FRAMES = 40


def load(folder: str):
    labels = {r["file"]: r for r in map(json.loads, open(os.path.join(folder, "labels.jsonl"), encoding="utf-8"))}
    xs, ys, scripts = [], [], []
    for r in map(json.loads, open(os.path.join(folder, "features.jsonl"))):
        if r["frames"] < MIN_FRAMES:
            continue
        lab = labels[r["file"]]
        xs.append(np.log(np.asarray(r["mean"], dtype=np.float64) + FLOOR))
        ys.append(1.0 if lab["unread"] else 0.0)
        scripts.append(lab["script"] if lab["unread"] else ("latin" if lab["script"] != "receipt" else "receipt") + ("" if lab["script"] != "latin+" else "+"))
    return np.stack(xs), np.asarray(ys), scripts


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 3000, lr: float = 0.5):
    """Logistic regression by gradient descent on standardised features; weights returned on the raw features."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    w = np.zeros(x.shape[1])
    b = 0.0
    # The classes are weighted equally whatever their counts.
    cw = np.where(y > 0, 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum()))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        g = p - y
        w -= lr * ((z.T @ (g * cw)) + l2 * w)
        b -= lr * float((g * cw).sum())
    return w / sd, b - float((w / sd) @ mu)


def report(name: str, x, y, scripts, w, b) -> None:
    score = x @ w + b
    flagged = score > 0
    print(f"{name}: {len(y)} lines, accuracy {np.mean(flagged == (y > 0)):.4f}")
    for s in sorted(set(scripts)):
        m = np.asarray([t == s for t in scripts])
        print(f"  {s:12s} {m.sum():5d} lines  flagged {flagged[m].mean() * 100:6.2f}%")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True, nargs="+")
    ap.add_argument("--test", required=True)
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--write", help="a bundle folder whose config.json gets the probe")
    args = ap.parse_args()
    parts = [load(d) for d in args.train]
    xtr = np.concatenate([p[0] for p in parts])
    ytr = np.concatenate([p[1] for p in parts])
    str_ = sum((p[2] for p in parts), [])
    xte, yte, ste = load(args.test)
    w, b = fit(xtr, ytr, args.l2)
    report("train", xtr, ytr, str_, w, b)
    report("held out", xte, yte, ste, w, b)
    if args.write:
        path = os.path.join(args.write, "config.json")
        config = json.load(open(path, encoding="utf-8"))
        gate = {
            "weights": [round(float(v), 5) for v in w],
            "bias": round(float(b), 5),
            "floor": FLOOR,
            "minFrames": MIN_FRAMES,
            "trainedOn": "training/script_lines.py: synthetic lines (Latin prose, code, receipts; Hangul, Han, kana, "
                         "Cyrillic, Greek, Hebrew, Arabic, Devanagari, Thai), features by training/script_features.mjs",
            "heldOutAccuracy": round(float(np.mean(((xte @ w + b) > 0) == (yte > 0))), 4),
        }
        # Keep the keys in place: the gate goes before `golden`.
        out = {}
        for k, v in config.items():
            if k == "scriptGate":
                continue
            if k == "golden":
                out["scriptGate"] = gate
            out[k] = v
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
