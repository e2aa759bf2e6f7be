"""Formula crops typeset by real TeX: LaTeX from papers (one formula a line), labelled with its canonical spelling
(latex_canon.py), typeset by Debian's TeX Live (`latex`, `dvipng`) in the math fonts papers use, cut as the page's
formula crops are cut, into a pool in pdf_lines.py's format (`train.py --pdf-lines POOL`; degraded at training time).

Each formula is typeset twice, as written and as its label, and kept only where the two pictures agree: a label
is never a guess at what the picture says. Where the formulas come from (public corpora, fetched, never committed),
and the held-out set, are in training/README.md ("Formulas from real LaTeX").

  /usr/bin/python3 training/tex_formulas.py --formulas FORMULAS.txt --out training/runs/texf-pool --count 40000
  /usr/bin/python3 training/tex_formulas.py --formulas TEST.txt --out training/runs/texf-heldout --count 1000 \\
      --seed 909 --in-order

Nothing here reads ../shared/eval.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from multiprocessing import Pool

import numpy as np
from PIL import Image

from formula import cut
from latex_canon import SPACING, canonical, tokens

# Math font setups papers use (Debian's texlive-fonts-recommended); None is Computer Modern.
FONTS = [None, None, None, "mathptmx", "txfonts", "pxfonts", "mathpazo", "mathpple"]
PREAMBLE = ("\\documentclass[12pt]{article}\\usepackage{amsmath,amssymb,amsfonts,bm}%s"
            "\\pagestyle{empty}\\begin{document}\n")
BATCH = 60


def typeset(groups: list[tuple[str, ...]], font: str | None, dpi: int, display: bool) -> list[tuple | None] | None:
    """Each group's formulas typeset on pages of their own: per group its grey pictures, or None where TeX erred."""
    wrap = ("\\[%s\\]" if display else "$%s$") + "\\newpage\n"
    with tempfile.TemporaryDirectory() as d:
        head = PREAMBLE % (f"\\usepackage{{{font}}}" if font else "")
        body = "".join(wrap % s.replace("\n", " ") for group in groups for s in group)
        with open(os.path.join(d, "f.tex"), "w") as f:
            f.write(head + body + "\\end{document}\n")
        subprocess.run(["latex", "-interaction=nonstopmode", "f.tex"], cwd=d, capture_output=True, timeout=120)
        log = open(os.path.join(d, "f.log"), errors="replace").read()
        if not os.path.exists(os.path.join(d, "f.dvi")):
            return None
        # An error's "l.N" names the .tex line (line 1 is the preamble; pages follow one a line).
        bad = {int(m) - 2 for m in re.findall(r"^l\.(\d+)", log, re.M)}
        subprocess.run(["dvipng", "-q", "-D", str(dpi), "-T", "tight", "-bg", "White", "-o", "p%d.png", "f.dvi"],
                       cwd=d, capture_output=True, timeout=300)
        out, first = [], 0
        for group in groups:
            pages = [os.path.join(d, f"p{first + j + 1}.png") for j in range(len(group))]
            numbers = range(first, first + len(group))
            first += len(group)
            if any(j in bad for j in numbers) or not all(os.path.exists(p) for p in pages):
                out.append(None)
                continue
            out.append(tuple(np.asarray(Image.open(p).convert("L")) for p in pages))
        return out


def same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two typeset pictures show the same formula: within a pixel in size and 2% of the ink."""
    if abs(a.shape[0] - b.shape[0]) > 1 or abs(a.shape[1] - b.shape[1]) > 1:
        return False
    h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    ia, ib = a[:h, :w] < 128, b[:h, :w] < 128
    return (ia ^ ib).sum() <= 0.02 * max(1, ia.sum())


def unspaced(src: str) -> str:
    """The source without what the label drops by design (spacing, labels): what the label must draw the same as."""
    src = re.sub(r"\\(label|hspace\*?|vspace\*?|tag)\s*\{[^{}]*\}", " ", src)
    return "".join(" " if t in SPACING else t for t in tokens(src))


def job(args: tuple) -> tuple[list, int]:
    pairs, seed = args
    rng = random.Random(seed)
    font, dpi, display = rng.choice(FONTS), rng.choice([100, 120, 150, 180, 220, 260, 300]), rng.random() < 0.8
    pictures = typeset([(src, unspaced(src), label) for src, label in pairs], font, dpi, display)
    kept, mismatched = [], 0
    for (src, label), pic in zip(pairs, pictures or [None] * len(pairs)):
        if pic is None:
            continue
        if not same_picture(pic[1], pic[2]):
            mismatched += 1
            continue
        try:
            kept.append((label, cut(pic[0], rng)))
        except ValueError:
            pass
    return kept, mismatched


def candidates(path: str, exclude: set[str], max_chars: int, rng: random.Random | None):
    """(source, label) of the file's formulas whose label is new, ASCII, and within max_chars; shuffled with rng."""
    lines = [x.rstrip("\n") for x in open(path, encoding="utf-8", errors="replace") if x.strip()]
    if rng:
        rng.shuffle(lines)
    seen = set(exclude)
    for src in lines:
        label = canonical(src)
        if not label or not label.isascii() or "\t" in label or len(label) > max_chars:
            continue
        key = label.replace(" ", "")
        if key in seen:
            continue
        seen.add(key)
        yield src, label


def read_exclude(paths: list[str]) -> set[str]:
    """Labels (spaces removed) of earlier pools' labels.tsv files, or canonical forms of plain formula lists."""
    out = set()
    for p in paths:
        for line in open(p, encoding="utf-8", errors="replace"):
            if p.endswith(".tsv"):
                parts = line.rstrip("\n").split("\t")
                label = parts[1] if len(parts) > 1 else None
            else:
                label = canonical(line)
            if label:
                out.add(label.replace(" ", ""))
    return out


def build(args) -> None:
    rng = None if args.in_order else random.Random(args.seed)
    found = candidates(args.formulas, read_exclude(args.exclude or []), args.max_chars, rng)
    os.makedirs(args.out, exist_ok=True)
    n = mismatched = tried = 0
    with open(os.path.join(args.out, "labels.tsv"), "w", encoding="utf-8") as tsv, Pool(args.jobs) as pool:
        while n < args.count:
            batches = []
            for b in range(args.jobs * 2):
                pairs = [p for _, p in zip(range(BATCH), found)]
                if pairs:
                    batches.append((pairs, args.seed * 100003 + tried + b))
            if not batches:
                break
            tried += len(batches)
            for kept, bad in pool.map(job, batches):
                mismatched += bad
                for label, img in kept:
                    if n >= args.count:
                        break
                    name = f"{n:06d}.png"
                    img.save(os.path.join(args.out, name))
                    tsv.write(f"{name}\t{label}\tformula\n")
                    n += 1
            print(f"{n}/{args.count} formulas ({mismatched} whose label drew otherwise)", file=sys.stderr, flush=True)
    print(f"{n} formulas in {args.out}; {mismatched} dropped: label and source typeset differently", file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formulas", required=True, help="LaTeX formulas, one a line")
    ap.add_argument("--out", required=True, help="the pool's folder (PNG crops and labels.tsv)")
    ap.add_argument("--count", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-chars", type=int, default=150, help="longest label kept (the reader's token budget)")
    ap.add_argument("--exclude", nargs="*", help="labels.tsv files or formula lists this set must not hold")
    ap.add_argument("--in-order", action="store_true", help="take the file's formulas in order (a held-out set)")
    ap.add_argument("--jobs", type=int, default=2)
    build(ap.parse_args())
