"""Real typeset lines from born-digital PDFs: the documentation Debian's packages ship (TeX Live's package manuals,
program manuals), rendered with poppler and labelled from their own text layers.

Every line render.py draws is one font at one size, set by PIL. A typeset page has what it does not: kerning and
ligatures, small capitals, italic corrections, mixed faces and sizes within a line, subscripts, TeX's spacing,
Computer Modern and its relatives. These lines are cut from such pages, so their labels are what the PDF says is
printed there, not what a generator meant to print.

  # build a pool of clean line crops (no degradations: those are drawn at training time, each draw differently)
  /usr/bin/python3 training/pdf_lines.py --out training/runs/pdf-lines --pages 600
  # a sheet of 24 of them, degraded as training sees them
  /usr/bin/python3 training/pdf_lines.py --out training/runs/pdf-lines --sheet /tmp/pdf-lines.png

A line is kept only when its text layer can be trusted for the crop: every character in the model's charset (after
NFKC, which spells ligatures out), words left to right on one baseline band, no other line's box over it, ink in
the crop, a plausible height. PDFs are split by the hash of their path: one in ten is held out (`--split heldout`)
and never drawn for training. Nothing here reads ../shared/eval.
"""
import argparse
import glob
import hashlib
import io
import os
import random
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from render import degrade  # noqa: E402

# Where Debian's documentation packages put their PDFs (training/README.md lists the packages installed for this).
PDF_GLOBS = ["/usr/share/doc/**/*.pdf", "/usr/share/texlive/texmf-dist/doc/**/*.pdf", "/usr/share/texmf/doc/**/*.pdf"]
XHTML = "{http://www.w3.org/1999/xhtml}"
# Rendered at one of these resolutions, so the same face reaches the model at several pixel sizes.
DPIS = [110, 150, 200, 300]
_ALLOWED = set(charset.CHARS)


def held_out(path: str) -> bool:
    """One PDF in ten, by its path: never drawn for training."""
    return int(hashlib.sha1(path.encode()).hexdigest(), 16) % 10 == 0


def language_doc_pdfs() -> set[str]:
    """The PDFs of TeX Live's language collections (texlive-lang-*): the European line set's source
    (bench/european-lines.py), so never a training line, in either split."""
    names = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\n", "texlive-lang-*"], capture_output=True,
                           text=True).stdout.split()
    installed = [n for n in names if subprocess.run(["dpkg-query", "-L", n], capture_output=True).returncode == 0]
    if not installed:
        return set()
    listed = subprocess.run(["dpkg-query", "-L", *installed], capture_output=True, text=True).stdout.split("\n")
    return {os.path.realpath(p) for p in listed if p.endswith(".pdf")}


def find_pdfs(split: str) -> list[str]:
    paths = sorted({p for g in PDF_GLOBS for p in glob.glob(g, recursive=True) if os.path.getsize(p) > 0})
    evaluated = language_doc_pdfs()
    return [p for p in paths if held_out(p) == (split == "heldout") and os.path.realpath(p) not in evaluated]


def page_count(pdf: str) -> int:
    out = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True, timeout=60).stdout
    for line in out.splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    return 0


def text_lines(pdf: str, page: int) -> list[tuple[tuple[float, float, float, float], list[tuple[float, float, float, float, str]]]]:
    """The page's text lines from its text layer: (line box, words with boxes), in PDF points."""
    xml = subprocess.run(["pdftotext", "-bbox-layout", "-f", str(page), "-l", str(page), pdf, "-"],
                         capture_output=True, timeout=60).stdout
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return []
    out = []
    for line in root.iter(f"{XHTML}line"):
        box = tuple(float(line.get(k)) for k in ("xMin", "yMin", "xMax", "yMax"))
        words = [(*(float(w.get(k)) for k in ("xMin", "yMin", "xMax", "yMax")), w.text or "") for w in line.iter(f"{XHTML}word")]
        out.append((box, words))
    return out


def render_page(pdf: str, page: int, dpi: int) -> Image.Image | None:
    png = subprocess.run(["pdftoppm", "-f", str(page), "-l", str(page), "-r", str(dpi), "-gray", "-png", pdf],
                         capture_output=True, timeout=120).stdout
    return Image.open(io.BytesIO(png)).convert("L") if png else None


def label(words, table: dict[int, str] | None = None) -> str | None:
    """The words as one line of the model's charset, or None when the text layer cannot be trusted for the crop.
    `table`: a str.translate table for a text layer that names some glyphs by private-use code points."""
    text = unicodedata.normalize("NFKC", " ".join(w[4] for w in words).translate(table or {})).strip()
    text = " ".join(text.split())
    if len(text) < 3 or any(c not in _ALLOWED for c in text):
        return None
    # Words left to right, on one band: a text layer's "line" can join pieces set apart (math, marginal notes).
    xs = [w[0] for w in words]
    if xs != sorted(xs):
        return None
    tops, bottoms = [w[1] for w in words], [w[3] for w in words]
    h = max(bottoms) - min(tops)
    if h <= 0 or max(tops) - min(tops) > 0.6 * h:
        return None
    return text


def overlaps(a, b) -> float:
    """Share of b's area that lies inside a."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    area = (b[2] - b[0]) * (b[3] - b[1])
    return max(0.0, w) * max(0.0, h) / area if area > 0 else 0.0


def page_lines(pdf: str, page: int, rng: random.Random, table: dict[int, str] | None = None):
    """Clean crops of a page's trustworthy lines, with training-like margins: [(image, text)]."""
    lines = text_lines(pdf, page)
    if not lines:
        return []
    dpi = rng.choice(DPIS)
    img = render_page(pdf, page, dpi)
    if img is None:
        return []
    s = dpi / 72.0
    out = []
    for i, (box, words) in enumerate(lines):
        text = label(words, table)
        if text is None:
            continue
        if any(overlaps(box, other[0]) > 0.2 or overlaps(other[0], box) > 0.2 for j, other in enumerate(lines) if j != i):
            continue
        x0, y0, x1, y1 = (v * s for v in box)
        h = y1 - y0
        if not 8 <= h <= 160 or x1 - x0 < 2 * h:
            continue
        # Margins as render.py's lines have them: a little over or under the line's box top and bottom, up to half
        # its height left and right (a neighbour's sliver may come in, as it does in a page's line crops).
        top = y0 - rng.uniform(-0.1, 0.35) * h
        bottom = y1 + rng.uniform(-0.1, 0.35) * h
        left = x0 - rng.uniform(0, 0.5) * h
        right = x1 + rng.uniform(0, 0.5) * h
        crop = img.crop((int(max(0, left)), int(max(0, top)), int(min(img.width, right)), int(min(img.height, bottom))))
        a = np.asarray(crop)
        if crop.height < 10 or a.size == 0 or (a < 128).mean() < 0.01:
            continue  # no ink where the text layer says text is (white text, a clipped figure)
        out.append((crop, text))
    return out


def build(out_dir: str, pages: int, split: str, seed: int) -> None:
    rng = random.Random(seed)
    pdfs = find_pdfs(split)
    if not pdfs:
        raise SystemExit("no PDFs found: install the documentation packages training/README.md lists")
    os.makedirs(out_dir, exist_ok=True)
    counts = {p: page_count(p) for p in pdfs}
    pdfs = [p for p in pdfs if counts[p] > 0]
    n = 0
    with open(os.path.join(out_dir, "labels.tsv"), "w", encoding="utf-8") as tsv:
        for k in range(pages):
            pdf = rng.choice(pdfs)
            page = rng.randint(1, counts[pdf])
            for crop, text in page_lines(pdf, page, rng):
                name = f"{n:06d}.png"
                crop.save(os.path.join(out_dir, name))
                tsv.write(f"{name}\t{text}\t{os.path.basename(pdf)}:{page}\n")
                n += 1
            if (k + 1) % 20 == 0:
                print(f"{k + 1}/{pages} pages, {n} lines", file=sys.stderr, flush=True)
    print(f"{n} lines from {pages} pages of {len(pdfs)} PDFs ({split}) in {out_dir}", file=sys.stderr)


class PdfLinePool:
    """The pool build() wrote, drawn from at training time: a crop, degraded afresh each draw, and its label."""

    def __init__(self, out_dir: str):
        self.dir = out_dir
        with open(os.path.join(out_dir, "labels.tsv"), encoding="utf-8") as f:
            self.items = [line.rstrip("\n").split("\t")[:2] for line in f if line.strip()]
        if not self.items:
            raise SystemExit(f"{out_dir} holds no lines: run pdf_lines.py --out {out_dir} first")

    def draw(self, rng: random.Random):
        name, text = rng.choice(self.items)
        img = Image.open(os.path.join(self.dir, name)).convert("L")
        return degrade(img, int(np.percentile(np.asarray(img), 90)), rng), text


def sheet(out_dir: str, path: str, seed: int) -> None:
    pool = PdfLinePool(out_dir)
    rng = random.Random(seed)
    rows = [pool.draw(rng) for _ in range(24)]
    scaled = [im.resize((max(1, int(im.width * 32 / im.height)), 32)) for im, _ in rows]
    w = min(1600, max(im.width for im in scaled))
    out = Image.new("L", (w, 40 * len(scaled)), 128)
    for i, im in enumerate(scaled):
        out.paste(im, (0, 40 * i))
    out.save(path)
    for _, text in rows:
        print(text)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the pool's folder (PNG crops and labels.tsv)")
    ap.add_argument("--pages", type=int, default=600, help="pages drawn at random from the PDFs")
    ap.add_argument("--split", choices=["train", "heldout"], default="train")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sheet", help="draw 24 degraded lines of an existing pool to this PNG instead of building")
    args = ap.parse_args()
    if args.sheet:
        sheet(args.out, args.sheet, args.seed)
    else:
        build(args.out, args.pages, args.split, args.seed)
