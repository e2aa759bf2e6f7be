"""Render a clean one-column page (a heading and wrapped paragraphs) with its ground-truth text.

  /usr/bin/python3 training/make_page.py --out examples/sample-page.png --seed 7

Writes OUT and OUT with .txt (one line of text per printed line). The text comes from the synthetic
sources in textgen.py; nothing here reads ../shared/eval.
"""
import argparse
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render import FontBank  # noqa: E402
from textgen import TextSource  # noqa: E402

FACES = ["Liberation Serif", "TeX Gyre Termes", "Latin Modern Roman", "DejaVu Sans", "Nimbus Sans", "Carlito"]


def wrap(text: str, font, width: int) -> list[str]:
    lines, cur = [], ""
    for word in text.split():
        trial = f"{cur} {word}".strip()
        if font.getlength(trial) <= width or not cur:
            cur = trial
        else:
            lines.append(cur)
            cur = word
    if cur:
        lines.append(cur)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--width", type=int, default=1240)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--size", type=int, default=24)
    ap.add_argument("--face", default=None)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    src, bank = TextSource(args.seed), FontBank()
    face = args.face or rng.choice([f for f in FACES if f in bank.families])
    regular = [p for p, _h, bold, italic in bank.families[face] if not bold and not italic][0]
    bold = ([p for p, _h, b, i in bank.families[face] if b and not i] or [regular])[0]
    body = ImageFont.truetype(regular, args.size)
    head = ImageFont.truetype(bold, int(args.size * 1.5))
    margin = int(args.width * 0.1)
    img = Image.new("L", (args.width, args.height), 255)
    draw = ImageDraw.Draw(img)
    y = margin
    printed = []
    title = src.line(40).title()
    draw.text((margin, y), title, font=head, fill=0)
    printed.append(title)
    y += int(args.size * 1.5 * 1.8)
    line_h = int(args.size * 1.45)
    while y + line_h * 3 < args.height - margin:
        para = " ".join(src._prose_span(400) for _ in range(2))
        for line in wrap(para, body, args.width - 2 * margin)[: rng.randint(3, 6)]:
            if y + line_h > args.height - margin:
                break
            draw.text((margin, y), line, font=body, fill=0)
            printed.append(line)
            y += line_h
        y += line_h // 2
    img.save(args.out, optimize=True)
    with open(os.path.splitext(args.out)[0] + ".txt", "w") as f:
        f.write("\n".join(printed) + "\n")
    print(f"{args.out}: {face}, {len(printed)} lines")


if __name__ == "__main__":
    main()
