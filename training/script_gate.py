"""Fit the script gate: a softmax probe on log(mean CTC distribution) that says a line is in a script the model lacks,
and which.

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


READ = "read"


def load(folder: str, features: str = "features.jsonl", unread_also: frozenset = frozenset()):
    """Features, class names (READ, or the unread line's script) and each line's finer label for the report.
    `unread_also`: scripts the lines label as read that this model does not read (a bundle without the European
    letters: cyrillic, greek)."""
    labels = {r["file"]: r for r in map(json.loads, open(os.path.join(folder, "labels.jsonl"), encoding="utf-8"))}
    xs, ys, kinds = [], [], []
    for r in map(json.loads, open(os.path.join(folder, features))):
        if r["frames"] < MIN_FRAMES:
            continue
        lab = labels[r["file"]]
        xs.append(np.log(np.asarray(r["mean"], dtype=np.float64) + FLOOR))
        ys.append(lab["script"] if lab["unread"] or lab["script"] in unread_also else READ)
        kinds.append(lab["script"])
    return np.stack(xs), ys, kinds


def fit(x: np.ndarray, y: np.ndarray, k: int, l2: float, steps: int = 3000, lr: float = 0.5):
    """Softmax regression by gradient descent on standardised features, every class weighted equally whatever its
    count (the read class as much as all the others together); weights returned on the raw features."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    w = np.zeros((k, x.shape[1]))
    b = np.zeros(k)
    onehot = np.eye(k)[y]
    counts = onehot.sum(0)
    cw = np.where(y == 0, 0.5 / counts[0], 0.5 / ((k - 1) * counts[y]))
    for _ in range(steps):
        logits = z @ w.T + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - onehot) * cw[:, None]
        w -= lr * (g.T @ z + l2 * w)
        b -= lr * g.sum(0)
    wr = w / sd
    return wr, b - wr @ mu


def verdicts(x, w, b):
    """As engine/ctc/script-gate.ts scores a line: log(sum of unread probabilities / p(read)), and the likeliest
    unread class."""
    z = x @ w.T + b
    rest = z[:, 1:]
    top = rest.max(1)
    unread = top + np.log(np.exp(rest - top[:, None]).sum(1)) - z[:, 0]
    return unread, rest.argmax(1) + 1


def report(name: str, x, y, kinds, classes, w, b) -> float:
    unread, which = verdicts(x, w, b)
    flagged = unread > 0
    truth = np.asarray([c != 0 for c in y])
    acc = float(np.mean(flagged == truth))
    print(f"{name}: {len(y)} lines, read/unread accuracy {acc:.4f}")
    for s in sorted(set(kinds)):
        m = np.asarray([t == s for t in kinds])
        named = np.mean([classes[c] == s for c in which[m & flagged]]) * 100 if (m & flagged).any() else 0.0
        print(f"  {s:12s} {m.sum():5d} lines  flagged {flagged[m].mean() * 100:6.2f}%  named right {named:6.2f}%")
    return acc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True, nargs="+")
    ap.add_argument("--test", required=True)
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--write", help="a bundle folder whose config.json gets the probe")
    ap.add_argument("--features", default="features.jsonl", help="the features file in each folder")
    ap.add_argument("--unread-also", default="", help="comma-separated scripts this model does not read, e.g. "
                    "cyrillic,greek for a bundle without the European letters")
    args = ap.parse_args()
    also = frozenset(filter(None, args.unread_also.split(",")))
    parts = [load(d, args.features, also) for d in args.train]
    xtr = np.concatenate([p[0] for p in parts])
    names = sum((p[1] for p in parts), [])
    ktr = sum((p[2] for p in parts), [])
    classes = [READ] + sorted(set(names) - {READ})
    ytr = np.asarray([classes.index(c) for c in names])
    xte, names_te, kte = load(args.test, args.features, also)
    yte = np.asarray([classes.index(c) for c in names_te])
    w, b = fit(xtr, ytr, len(classes), args.l2)
    report("train", xtr, ytr, ktr, classes, w, b)
    held = report("held out", xte, yte, kte, classes, w, b)
    if args.write:
        path = os.path.join(args.write, "config.json")
        config = json.load(open(path, encoding="utf-8"))
        gate = {
            "classes": classes,
            "weights": [[round(float(v), 5) for v in row] for row in w],
            "bias": [round(float(v), 5) for v in b],
            "floor": FLOOR,
            "minFrames": MIN_FRAMES,
            "trainedOn": "training/script_lines.py: synthetic lines (Latin prose, code, receipts, european.py's "
                         "languages, Greek and Cyrillic; Hangul, Han, kana, Hebrew, Arabic, Devanagari, Thai), "
                         "features by training/script_features.mjs",
            "heldOutAccuracy": round(held, 4),
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
