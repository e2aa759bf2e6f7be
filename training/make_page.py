"""Render synthetic pages with their ground truth: text lines and typed blocks (for the README's sample page and
for layout tests).

  /usr/bin/python3 training/make_page.py --out examples/sample-page.png --seed 3 --face "Liberation Serif"
  /usr/bin/python3 training/make_page.py --layout article --out test/fixtures/article.png --seed 11
  /usr/bin/python3 training/make_page.py --layout two-column --out test/fixtures/two-column.png --seed 12
  /usr/bin/python3 training/make_page.py --layout table --out test/fixtures/table.png --seed 13
  /usr/bin/python3 training/make_page.py --layout magazine --out test/fixtures/magazine.png --seed 14 --width 1400 --height 1400 --size 22
  /usr/bin/python3 training/make_page.py --layout statement --out test/fixtures/statement.png --seed 31 --face "Liberation Sans"
  /usr/bin/python3 training/make_page.py --layout grouped --out test/fixtures/grouped.png --seed 33 --face "TeX Gyre Termes"
  /usr/bin/python3 training/make_page.py --out test/fixtures/wide-lines.png --width 2200 --height 700 --size 18 --seed 21 --face "Liberation Sans"

Writes OUT, OUT with .txt (the printed lines, in reading order) and, for layouts other than `plain`, OUT with
.json (blocks: type, box [x, y, w, h], lines). The text comes from textgen.py; nothing here reads ../shared/eval.
"""
import argparse
import json
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render import FontBank  # noqa: E402
from textgen import TextSource  # noqa: E402

FACES = ["Liberation Serif", "TeX Gyre Termes", "Latin Modern Roman", "DejaVu Sans", "Nimbus Sans", "Carlito"]


def wrap(text: str, font, width: int, hyphenate: bool = False) -> list[str]:
    lines, cur = [], ""
    for word in text.split():
        trial = f"{cur} {word}".strip()
        if font.getlength(trial) <= width or not cur:
            cur = trial
            continue
        if hyphenate and len(word) >= 7 and word.isalpha():
            # Break the word where its first part still fits, as a typesetter would.
            for cut in range(len(word) - 3, 2, -1):
                head = f"{cur} {word[:cut]}-"
                if font.getlength(head) <= width:
                    lines.append(head)
                    cur = word[cut:]
                    break
            else:
                lines.append(cur)
                cur = word
            continue
        lines.append(cur)
        cur = word
    if cur:
        lines.append(cur)
    return lines


class Page:
    def __init__(self, width, height, bank, face, size):
        self.img = Image.new("L", (width, height), 255)
        self.draw = ImageDraw.Draw(self.img)
        regular = [p for p, _h, bold, italic in bank.families[face] if not bold and not italic][0]
        bold = ([p for p, _h, b, i in bank.families[face] if b and not i] or [regular])[0]
        self.body = ImageFont.truetype(regular, size)
        self.small = ImageFont.truetype(regular, int(size * 0.8))
        self.head = ImageFont.truetype(bold, int(size * 1.5))
        self.sub = ImageFont.truetype(bold, int(size * 1.2))
        self.size = size
        self.blocks = []

    def text(self, x, y, s, font):
        self.draw.text((x, y), s, font=font, fill=0)
        l, t, r, b = self.draw.textbbox((x, y), s, font=font)
        return [l, t, r - l, b - t]

    def block(self, kind, x, y, lines, font, leading):
        boxes = []
        for i, s in enumerate(lines):
            boxes.append(self.text(x, y + i * leading, s, font))
        x0 = min(b[0] for b in boxes)
        y0 = min(b[1] for b in boxes)
        x1 = max(b[0] + b[2] for b in boxes)
        y1 = max(b[1] + b[3] for b in boxes)
        self.blocks.append({"type": kind, "box": [x0, y0, x1 - x0, y1 - y0], "lines": lines, "line_boxes": boxes})
        return y + len(lines) * leading

    def save(self, out, with_json=True):
        self.img.save(out, optimize=True)
        base = os.path.splitext(out)[0]
        with open(base + ".txt", "w") as f:
            f.write("\n".join(line for b in self.blocks for line in b["lines"]) + "\n")
        if with_json:
            with open(base + ".json", "w") as f:
                json.dump({"width": self.img.width, "height": self.img.height, "blocks": self.blocks}, f, indent=1)


def prose(src, rng, n):
    return " ".join(src._prose_span(n) for _ in range(2))


def fill(p, src, rng, x, y, width, bottom, lead, span, most):
    """Paragraphs of 3..`most` lines from y down to `bottom`; returns where they stop."""
    while y + lead * 3 < bottom:
        lines = wrap(prose(src, rng, span), p.body, width)[: rng.randint(3, most)]
        lines = [s for i, s in enumerate(lines) if y + (i + 1) * lead <= bottom]
        if not lines:
            break
        y = p.block("paragraph", x, y, lines, p.body, lead) + lead // 2
    return y


def plain(args, src, bank, rng, face):
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.1)
    y = p.block("heading", margin, margin, [src.line(40).title()], p.head, int(args.size * 2.7))
    fill(p, src, rng, margin, y, args.width - 2 * margin, args.height - margin, int(args.size * 1.45), 400, 6)
    return p


def article(args, src, bank, rng, face):
    """Running header, title, section heading, hyphenated paragraphs, a list, page number."""
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.1)
    lead = int(args.size * 1.45)
    p.block("page_header", margin, int(margin * 0.4), [f"Journal of Synthetic Documents, vol. {rng.randint(2, 40)}"], p.small, lead)
    y = p.block("heading", margin, margin, [src.line(36).title()], p.head, int(args.size * 2.4)) + lead // 2
    width = args.width - 2 * margin
    y = p.block("paragraph", margin, y, wrap(prose(src, rng, 300), p.body, width, hyphenate=True)[:5], p.body, lead) + lead // 2
    y = p.block("heading", margin, y, [f"{rng.randint(1, 9)}. {src.line(24).title()}"], p.sub, int(args.size * 2.0))
    for _ in range(3):
        y = p.block("list_item", margin, y, [f"• {src.line(60)}"], p.body, lead)
    y += lead // 2
    lines = wrap(prose(src, rng, 300), p.body, width, hyphenate=True)
    room = (args.height - margin - y) // lead
    y = p.block("paragraph", margin, y, lines[: max(1, min(len(lines), room))], p.body, lead)
    p.block("page_number", args.width // 2 - args.size, args.height - int(margin * 0.6), [str(rng.randint(2, 300))], p.body, lead)
    return p


def two_column(args, src, bank, rng, face):
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.08)
    gutter = int(args.width * 0.05)
    lead = int(args.size * 1.4)
    y0 = p.block("heading", margin, margin, [src.line(40).title()], p.head, int(args.size * 2.4)) + lead // 2
    col_w = (args.width - 2 * margin - gutter) // 2
    for c in range(2):
        fill(p, src, rng, margin + c * (col_w + gutter), y0, col_w, args.height - margin, lead, 300, 5)
    return p


def table(args, src, bank, rng, face):
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.1)
    lead = int(args.size * 1.6)
    y = p.block("paragraph", margin, margin, wrap(prose(src, rng, 200), p.body, args.width - 2 * margin)[:2], p.body, int(args.size * 1.45)) + lead
    cols = 4
    header = ["Item", "Quantity", "Price", "Date"]
    rows = [header] + [[src._word().title()[:12], str(rng.randint(1, 999)), src._price(), src._date()] for _ in range(6)]
    col_x = [margin + i * (args.width - 2 * margin) // cols for i in range(cols)]
    top = y
    cells, cell_boxes = [], []
    for r, row in enumerate(rows):
        font = p.sub if r == 0 else p.body
        cell_boxes.append([p.text(col_x[c], y, cell, font) for c, cell in enumerate(row)])
        cells.append(row)
        y += lead
    if args.ruled:
        p.draw.line([(margin - 10, top - 8), (args.width - margin, top - 8)], fill=0, width=2)
        p.draw.line([(margin - 10, top + lead - 6), (args.width - margin, top + lead - 6)], fill=0, width=1)
        p.draw.line([(margin - 10, y - 4), (args.width - margin, y - 4)], fill=0, width=2)
    p.blocks.append({"type": "table", "box": [margin, top, args.width - 2 * margin, y - top], "lines": ["\t".join(r) for r in rows], "cells": cells, "cell_boxes": cell_boxes})
    y += lead
    p.block("paragraph", margin, y, wrap(prose(src, rng, 200), p.body, args.width - 2 * margin)[:2], p.body, int(args.size * 1.45))
    return p


def flow(p, words, x_of, y, bottom, lead, font):
    """Lines from `words` down to `bottom`, each as wide as `x_of(y)` = (left, right) allows at its row; a line
    whose row has no room is skipped. Returns the blocks' lines and boxes (one paragraph per call)."""
    lines, boxes = [], []
    while words and y + lead <= bottom:
        left, right = x_of(y)
        cur = ""
        while words and (not cur or font.getlength(f"{cur} {words[0]}") <= right - left):
            cur = f"{cur} {words.pop(0)}".strip()
        lines.append(cur)
        boxes.append(p.text(left, y, cur, font))
        y += lead
    if lines:
        x0 = min(b[0] for b in boxes)
        y0 = min(b[1] for b in boxes)
        x1 = max(b[0] + b[2] for b in boxes)
        y1 = max(b[1] + b[3] for b in boxes)
        p.blocks.append({"type": "paragraph", "box": [x0, y0, x1 - x0, y1 - y0], "lines": lines, "line_boxes": boxes})
    return y


def magazine(args, src, bank, rng, face):
    """Two columns set close (a gutter under a line height), a halftone photo across the gutter with the text
    wrapped around it, its caption centred below it between the columns, and a scanner's dark edge at the foot."""
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.07)
    gutter = int(args.size * 0.7)
    lead = int(args.size * 1.35)
    col_w = (args.width - 2 * margin - gutter) // 2
    mid = args.width // 2
    y0 = p.block("heading", margin, margin, [src.line(40).title()], p.head, int(args.size * 2.4)) + lead // 2
    # The photo: soft dark blobs, dithered to 1 bit as a halftone is.
    pw, ph = int(args.width * 0.34), int(args.height * 0.26)
    px, py = mid - pw // 2, y0 + 6 * lead
    photo = Image.new("L", (pw, ph), 200)
    d = ImageDraw.Draw(photo)
    for _ in range(14):
        cx, cy, r = rng.randint(0, pw), rng.randint(0, ph), rng.randint(ph // 6, ph // 2)
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=rng.randint(10, 120))
    p.img.paste(photo.convert("1").convert("L"), (px, py))
    p.blocks.append({"type": "figure", "box": [px, py, pw, ph], "lines": []})
    # The caption under it, narrower than the photo, in small capitals' stead small type.
    cap_w = int(pw * 0.55)
    cap_lines = wrap(" ".join(src.line(30) for _ in range(4)), p.small, cap_w)[:3]
    cap_lead = int(args.size * 1.1)
    cy = py + ph + lead // 2
    boxes = [p.text(mid - int(p.small.getlength(s)) // 2, cy + i * cap_lead, s, p.small) for i, s in enumerate(cap_lines)]
    x0 = min(b[0] for b in boxes)
    x1 = max(b[0] + b[2] for b in boxes)
    p.blocks.append({"type": "paragraph", "caption": True, "box": [x0, boxes[0][1], x1 - x0, boxes[-1][1] + boxes[-1][3] - boxes[0][1]], "lines": cap_lines, "line_boxes": boxes})
    # Text keeps a line height away from the photo and a line height and a half from the caption.
    photo_rows = (py - lead, py + ph + lead // 4)
    cap_rows = (py + ph, cy + len(cap_lines) * cap_lead + lead // 2)
    room = int(args.size * 1.5)

    def left_of(y):
        right = margin + col_w
        if photo_rows[0] <= y <= photo_rows[1]:
            right = px - room
        elif cap_rows[0] <= y <= cap_rows[1]:
            right = x0 - room
        return margin, right

    def right_of(y):
        left = margin + col_w + gutter
        if photo_rows[0] <= y <= photo_rows[1]:
            left = px + pw + room
        elif cap_rows[0] <= y <= cap_rows[1]:
            left = x1 + room
        return left, args.width - margin

    bottom = args.height - margin - 40
    for column in (left_of, right_of):
        flow(p, " ".join(prose(src, rng, 300) for _ in range(30)).split(), column, y0, bottom, lead, p.body)
    # A scanner's dark edge along the foot of the page.
    p.draw.rectangle([0, args.height - 36, args.width, args.height], fill=0)
    return p


class TableText:
    """Text drawn into a table, row by row, and where it lies: a table block's `cells` and `cell_boxes`."""

    def __init__(self, p):
        self.p, self.cells, self.boxes = p, [], []

    def row(self):
        self.cells.append([])
        self.boxes.append([])
        return len(self.cells) - 1

    def draw(self, row, x, y, text, font):
        self.boxes[row].append(self.p.text(x, y, text, font))
        self.cells[row].append(text)


def statement(args, src, bank, rng, face):
    """A financial statement's table: two header rows over the value columns (a spanning "Year Ended" over dated
    columns; the stub column's head empty), a units line, currency signs in columns of their own, right-aligned
    figures, stub labels that wrap onto an indented second line, a rule over the total row; prose above and below.
    The block's `grid` is its rows as printed: [text, colspan, header] per cell (spanned positions left out);
    `cells` and `cell_boxes` the text drawn and where, row by row."""
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.1)
    lead = int(args.size * 1.5)
    width = args.width - 2 * margin
    y = p.block("paragraph", margin, margin, wrap(prose(src, rng, 200), p.body, width)[:2], p.body, int(args.size * 1.45)) + lead
    years = sorted(rng.sample(range(1990, 2030), 3), reverse=True)
    dates = [f"{rng.choice(['Jan', 'Mar', 'Jun', 'Sep', 'Dec'])} {rng.randint(1, 28)}, {yr}" for yr in years]
    stub_w = int(width * 0.38)
    col_w = (width - stub_w) // 3
    sign_x = [margin + stub_w + i * col_w + int(col_w * 0.08) for i in range(3)]
    right = [margin + stub_w + (i + 1) * col_w - int(col_w * 0.06) for i in range(3)]
    top = y
    t = TableText(p)
    span_title = rng.choice(["Year Ended", "Fiscal Year", "Twelve Months Ended"])
    t.draw(t.row(), int((sign_x[0] + right[2]) / 2 - p.sub.getlength(span_title) / 2), y, span_title, p.sub)
    y += lead
    p.draw.line([(sign_x[0], y - 6), (right[2], y - 6)], fill=0, width=1)
    row = t.row()
    for i, d in enumerate(dates):
        t.draw(row, int(right[i] - p.sub.getlength(d)), y, d, p.sub)
    y += lead
    units = "(In millions)"
    t.draw(t.row(), int((sign_x[1] + right[1]) / 2 - p.small.getlength(units) / 2), y, units, p.small)
    y += lead
    grid = [[["", 1, True], [span_title, 6, True]], [["", 1, True]] + [[d, 2, True] for d in dates], [["", 1, True], ["", 2, True], [units, 2, True], ["", 2, True]]]
    n = rng.randint(4, 6)
    for r in range(n + 1):
        total = r == n
        label = "Total" if total else " ".join(src._word() for _ in range(rng.randint(1, 5))).capitalize()
        values = [f"{rng.randint(1, 9999):,}" for _ in range(3)]
        signed = r == 0 or total
        if total:
            for i in range(3):
                p.draw.line([(sign_x[i], y - 5), (right[i], y - 5)], fill=0, width=1)
        row = t.row()
        lines = wrap(label, p.body, stub_w - args.size)
        t.draw(row, margin, y, lines[0], p.body)
        if len(lines) > 1:
            t.draw(row, margin + args.size, y + int(lead * 0.8), " ".join(lines[1:]), p.body)
        for i, v in enumerate(values):
            if signed:
                t.draw(row, sign_x[i], y, "$", p.body)
            t.draw(row, int(right[i] - p.body.getlength(v)), y, v, p.body)
        grid.append([[" ".join(lines), 1, False]] + [c for v in values for c in (["$" if signed else "", 1, False], [v, 1, False])])
        y += lead + (int(lead * 0.8) if len(lines) > 1 else 0)
    p.blocks.append({"type": "table", "box": [margin, top, width, y - top], "lines": [c for row in t.cells for c in row],
                     "grid": grid, "cells": t.cells, "cell_boxes": t.boxes})
    y += lead
    p.block("paragraph", margin, y, wrap(prose(src, rng, 200), p.body, width)[:2], p.body, int(args.size * 1.45))
    return p


def grouped(args, src, bank, rng, face):
    """A data table as papers set them: a header row over rules, a shaded band heading the body across the value
    columns, stub labels with smaller lines under them (the row's figures level with its first line or its middle
    one), a gap before a total row; a caption below. The block's `grid` is its rows: [text, colspan, header] per cell;
    `cells` and `cell_boxes` the text drawn and where, row by row."""
    p = Page(args.width, args.height, bank, face, args.size)
    margin = int(args.width * 0.12)
    lead = int(args.size * 1.35)
    width = args.width - 2 * margin
    y = p.block("paragraph", margin, margin, wrap(prose(src, rng, 200), p.body, width)[:2], p.body, int(args.size * 1.45)) + lead
    ncol = 5
    stub_w = int(width * 0.3)
    col_w = (width - stub_w) // (ncol - 1)
    right = [margin + stub_w + (i + 1) * col_w - int(col_w * 0.1) for i in range(ncol - 1)]
    heads = ["Source"] + [w.title()[:9] for w in (src._word() for _ in range(ncol - 1))]
    top = y
    t, grid = TableText(p), []
    p.draw.line([(margin, y - 8), (margin + width, y - 8)], fill=0, width=2)
    row = t.row()
    t.draw(row, margin, y, heads[0], p.sub)
    for i, h in enumerate(heads[1:]):
        t.draw(row, int(right[i] - p.sub.getlength(h)), y, h, p.sub)
    grid.append([[h, 1, True] for h in heads])
    y = max(b[1] + b[3] for b in t.boxes[row]) + 6
    p.draw.line([(margin, y), (margin + width, y)], fill=0, width=1)
    y += 5
    band = " ".join(src._word() for _ in range(3)).title()
    band_h = int(args.size * 1.5)
    p.draw.rectangle([(margin, y), (margin + width, y + band_h)], fill=225)
    bx = int(margin + stub_w + (width - stub_w) / 2 - p.sub.getlength(band) / 2)
    t.draw(t.row(), bx, y + 2, band, p.sub)
    grid.append([["", 1, False], [band, ncol - 1, False]])
    y += band_h + 10
    for r in range(rng.randint(4, 6)):
        row = t.row()
        label = src._word().title()
        subs = [" ".join(src._word() for _ in range(2)) for _ in range(rng.choice([0, 0, 1, 2]))]
        values = [f"{rng.randint(1, 999)}.{rng.randint(0, 9)}{rng.choice('BMT')}" for _ in range(ncol - 1)]
        level = y + (int(lead * 0.8) if len(subs) == 2 else 0)  # figures level with the middle line of three
        t.draw(row, margin, y, label, p.body)
        for k, sub in enumerate(subs):
            t.draw(row, margin + args.size, y + int(lead * 0.8) * (k + 1), sub, p.small)
        for i, v in enumerate(values):
            t.draw(row, int(right[i] - p.body.getlength(v)), level, v, p.body)
        grid.append([[" ".join([label] + subs), 1, False]] + [[v, 1, False] for v in values])
        y += lead + int(lead * 0.8) * len(subs)
    p.draw.line([(margin, y + lead // 6), (margin + width, y + lead // 6)], fill=0, width=1)
    y += lead // 2
    row = t.row()
    totals = [f"{rng.randint(1, 999)}.{rng.randint(0, 9)}T" for _ in range(ncol - 1)]
    t.draw(row, margin, y, "Total", p.sub)
    for i, v in enumerate(totals):
        t.draw(row, int(right[i] - p.sub.getlength(v)), y, v, p.sub)
    grid.append([["Total", 1, False]] + [[v, 1, False] for v in totals])
    y = max(b[1] + b[3] for b in t.boxes[row]) + 6
    p.draw.line([(margin, y), (margin + width, y)], fill=0, width=2)
    y += lead // 2
    p.blocks.append({"type": "table", "box": [margin, top, width, y - top], "lines": [c for r in t.cells for c in r],
                     "grid": grid, "cells": t.cells, "cell_boxes": t.boxes})
    y += lead
    p.block("paragraph", margin, y, wrap(prose(src, rng, 200), p.body, width)[:2], p.body, int(args.size * 1.45))
    return p


LAYOUTS = {"plain": plain, "article": article, "two-column": two_column, "table": table, "magazine": magazine,
           "statement": statement, "grouped": grouped}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--layout", default="plain", choices=sorted(LAYOUTS))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--width", type=int, default=1240)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--size", type=int, default=24)
    ap.add_argument("--face", default=None)
    ap.add_argument("--ruled", action="store_true", help="rules above, below and under the header of a table")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    src, bank = TextSource(args.seed), FontBank()
    face = args.face or rng.choice([f for f in FACES if f in bank.families])
    page = LAYOUTS[args.layout](args, src, bank, rng, face)
    page.save(args.out, with_json=args.layout != "plain")
    print(f"{args.out}: {args.layout}, {face}, {len(page.blocks)} blocks")


if __name__ == "__main__":
    main()
