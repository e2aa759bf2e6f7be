"""Receipt-like lines: what a shop's printer makes and a scanner or a phone sees, which render.py never drew.

- Dot-matrix print: the text set small in a plain face, then every pixel of it struck as a round dot on a grid
  (impact printers build each glyph from a 5x7 to 9x9 dot cell), the dots ragged and sometimes faint.
- Thermal print: mono and sans faces in grey ink that fades along the line and leaves streaks where a heating
  element is worn (lighter columns top to bottom).
- Text of the kind receipts carry: mostly capitals, prices, quantities, dates and times, codes with dashes,
  labels with colons, rows of stars and dashes.
- Tight boxes: cut to the ink (annotators box the text, not the line), and then, as the engine does with any
  line image (src/document/line-image.ts), usually given training-like margins back.

Nothing here looks at ../shared/eval: the words come from textgen's sources and the layouts from what any till
prints.
"""
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from render import FontBank, degrade

# Words a till prints (generic shop vocabulary, English and Malay/Indonesian as in South-East Asian receipts).
_LABELS = ["TOTAL", "SUBTOTAL", "SUB TOTAL", "CASH", "CHANGE", "TAX", "GST", "SST", "VAT", "DISCOUNT", "ROUNDING",
           "QTY", "PRICE", "AMOUNT", "AMT", "ITEM", "DESC", "CODE", "INVOICE", "INVOICE NO", "RECEIPT", "BILL",
           "CASH BILL", "TABLE", "CASHIER", "SALESPERSON", "MEMBER", "DATE", "TIME", "TEL", "FAX", "REG NO",
           "GST REG NO", "COMPANY NO", "DOC NO", "REF", "TERMINAL", "CARD", "VISA", "MASTER", "TENDER", "NETT",
           "JUMLAH", "TUNAI", "BAKI", "HARGA", "KUANTITI", "CUKAI", "TERIMA KASIH", "THANK YOU", "PLEASE COME AGAIN",
           "GOODS SOLD ARE NOT RETURNABLE", "CUSTOMER'S COPY", "TAX INVOICE", "SDN BHD", "ENTERPRISE", "TRADING",
           "RESTAURANT", "HARDWARE", "STATIONERY", "BOOKSTORE", "MART", "JALAN", "TAMAN", "LOT", "NO.", "KG"]


def receipt_text(src, rng: random.Random) -> str:
    """One line of a receipt."""
    k = rng.random()
    money = f"{rng.uniform(0, 500):.2f}"
    if k < 0.2:  # label: value
        label = rng.choice(_LABELS)
        value = rng.choice([money, f"RM{money}", f"RM {money}", src._date(), src._ident(), str(rng.randint(1, 99999))])
        text = f"{label}{rng.choice([':', ' :', ': ', '', ' '])} {value}"
    elif k < 0.4:  # item row: description, quantity, unit price, amount
        words = " ".join(src._word() for _ in range(rng.randint(1, 4)))
        qty = rng.randint(1, 20)
        text = rng.choice([f"{words} {qty} {money}", f"{qty} X {money} {words}", f"{words}", f"{qty} {words} {money} SR"])
    elif k < 0.5:  # date and time
        h, m, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        d, mo, y = rng.randint(1, 28), rng.randint(1, 12), rng.randint(2000, 2030)
        sep = rng.choice(["/", "-", "."])
        time = rng.choice([f"{h:02d}:{m:02d}", f"{h:02d}:{m:02d}:{s:02d}", f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"])
        text = f"{d:02d}{sep}{mo:02d}{sep}{rng.choice([y, y % 100])} {time}"
        if rng.random() < 0.3:
            text = f"{rng.choice(['-', '*', '**', '***'])} {text} {rng.choice(['-', '*', '**', '***', '--'])}"
    elif k < 0.6:  # codes: registration numbers, phone numbers, invoice numbers
        text = rng.choice([
            f"({rng.randint(100000, 9999999)}-{rng.choice('ABCDEFGHKMPTUVWX')})",
            f"{rng.randint(100000, 999999)}-{rng.choice('ABCDEFGHKMPTUVWX')}",
            f"TEL: 0{rng.randint(3, 9)}-{rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
            f"{rng.choice(['INV', 'CS', 'OR', 'TI'])}{rng.randint(10000, 999999)}",
            f"{rng.randint(1, 9)}{rng.randint(0, 99999):05d}{rng.randint(0, 9999):04d}",
        ])
    elif k < 0.7:  # an address line
        text = f"{rng.choice(['NO.', 'LOT', 'NO'])} {rng.randint(1, 300)}{rng.choice(['', '-' + str(rng.randint(1, 30)), rng.choice('ABC')])}, {rng.choice(['JALAN', 'JLN', 'TAMAN', 'LORONG'])} {src._word()} {rng.randint(1, 30) if rng.random() < 0.5 else ''}".strip() + rng.choice(["", ","])
    elif k < 0.75:  # rules of stars, dashes and equals
        text = rng.choice(["*", "-", "=", "."]) * rng.randint(8, 40)
    else:
        text = src.line(rng.randint(8, 48))
    if rng.random() < 0.8:
        text = text.upper()
    return " ".join(text.split())


def _dot_matrix(text: str, bank: FontBank, rng: random.Random, ink: int, bg: int) -> Image.Image:
    """The text set at a dot-matrix cell's size, then each of its pixels printed as a dot."""
    mono = [f for f in bank.names if "Mono" in f or "Courier" in f or "Typewriter" in f] or bank.names
    fam = bank.families[rng.choice(mono)]
    path, have, _b, _i = rng.choice(fam)
    text = "".join(c for c in text if c in have).strip() or "A"
    cell = rng.randint(12, 16)  # the font size on the dot grid: capitals 8-11 dots tall, as a 9-pin head prints them
    font = bank.font(path, cell)
    ascent, descent = font.getmetrics()
    l, _t, r, _b = font.getbbox(text)
    grid = Image.new("L", (max(1, r - l + 2), ascent + descent + 2), 0)
    ImageDraw.Draw(grid).text((1 - l, 1), text, font=font, fill=255)
    on = np.asarray(grid) > rng.randint(90, 150)
    pitch = rng.uniform(2.6, 4.2)  # pixels between dot centres
    stretch = rng.uniform(0.9, 1.3)  # some printers space dots wider across than down
    radius = pitch * rng.uniform(0.35, 0.6)
    h, w = on.shape
    img = Image.new("L", (int(w * pitch * stretch) + 4, int(h * pitch) + 4), bg)
    draw = ImageDraw.Draw(img)
    faint = rng.uniform(0.0, 0.25)
    for y, x in zip(*np.nonzero(on)):
        if rng.random() < faint * 0.3:
            continue  # a dot the ribbon missed
        cx = 2 + x * pitch * stretch + rng.uniform(-0.3, 0.3)
        cy = 2 + y * pitch + rng.uniform(-0.3, 0.3)
        rr = radius * rng.uniform(0.8, 1.15)
        tone = int(ink + (bg - ink) * rng.uniform(0, faint))
        draw.ellipse([cx - rr, cy - rr, cx + rr, cy + rr], fill=tone)
    return img, text


def _thermal(text: str, bank: FontBank, rng: random.Random, ink: int, bg: int) -> Image.Image:
    """Grey print that fades along the line and streaks where a heating element is worn."""
    names = [f for f in bank.names if any(k in f for k in ["Mono", "Sans", "Courier", "Helvetica", "Arial", "Nimbus", "Liberation"])] or bank.names
    path, have, _b, _i = rng.choice(bank.families[rng.choice(names)])
    text = "".join(c for c in text if c in have).strip() or "A"
    size = rng.randint(18, 34)
    font = bank.font(path, size)
    ascent, descent = font.getmetrics()
    l, _t, r, _b = font.getbbox(text)
    img = Image.new("L", (r - l + 4, ascent + descent + 4), 0)
    ImageDraw.Draw(img).text((2 - l, 2), text, font=font, fill=255)
    a = np.asarray(img, dtype=np.float32) / 255  # 1 where ink
    wdt = a.shape[1]
    fade = np.linspace(rng.uniform(0.6, 1.0), rng.uniform(0.45, 1.0), wdt)[None, :]
    streaks = np.ones(wdt, dtype=np.float32)
    for _ in range(rng.randint(0, 4)):
        x0 = rng.randrange(wdt)
        streaks[x0: x0 + rng.randint(1, 4)] *= rng.uniform(0.2, 0.7)
    strength = a * fade * streaks[None, :]
    out = bg - (bg - ink) * strength
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)), text


def tight(img: Image.Image, rng: random.Random) -> Image.Image:
    """Cut to the ink, leaving at most a couple of pixels. A row of dashes or dots keeps its line's height: a
    box drawn around it is a text line's box, not the dashes' own."""
    a = np.asarray(img, dtype=np.float32)
    lo, hi = float(np.percentile(a, 2)), float(np.percentile(a, 90))
    ys, xs = np.nonzero(a < (lo + hi) / 2)
    if len(xs) == 0:
        return img
    m = [rng.randint(0, 2) for _ in range(4)]
    if ys.max() - ys.min() + 1 < 0.4 * img.height:
        return img.crop((max(0, xs.min() - m[0]), 0, min(img.width, xs.max() + 1 + m[2]), img.height))
    box = (max(0, xs.min() - m[0]), max(0, ys.min() - m[1]), min(img.width, xs.max() + 1 + m[2]), min(img.height, ys.max() + 1 + m[3]))
    return img.crop(box)


def line_margins(img: Image.Image, bg: int) -> Image.Image:
    """The engine's margins for a line image (src/document/line-image.ts: ink band at most 0.65 of the height,
    0.17 of the height left and right), so training sees what inference reads."""
    a = np.asarray(img, dtype=np.float32)
    lo, hi = float(np.percentile(a, 2)), float(np.percentile(a, 90))
    ink = a < (lo + hi) / 2
    rows = ink.sum(1)
    if rows.max() == 0:
        return img
    on = np.nonzero(rows >= max(1, round(0.1 * rows.max())))[0]
    band = on[-1] - on[0] + 1
    grow = max(0, round((band / 0.65 - img.height) / 2))
    cols = np.nonzero(ink.sum(0))[0]
    side = round((img.height + 2 * grow) * 0.17)
    left = max(0, side - cols[0])
    right = max(0, side - (img.width - 1 - cols[-1]))
    out = Image.new("L", (img.width + left + right, img.height + 2 * grow), bg)
    out.paste(img, (left, grow))
    return out


def render_receipt_line(src, bank: FontBank, rng: random.Random) -> tuple[Image.Image, str]:
    text = receipt_text(src, rng)
    bg = rng.randint(185, 255)
    ink = rng.randint(0, min(120, bg - 70))
    img, text = (_dot_matrix if rng.random() < 0.45 else _thermal)(text, bank, rng, ink, bg)
    if rng.random() < 0.25:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.9)))
    if img.height >= 24:  # small print is already as degraded as it can be and stay legible
        img = degrade(img, bg, rng)
    img = tight(img, rng)
    if rng.random() < 0.7:
        img = line_margins(img, int(np.percentile(np.asarray(img), 90)))
    return img, text


if __name__ == "__main__":
    import os
    import sys

    from textgen import TextSource
    bank = FontBank()
    src = TextSource(5)
    rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
    os.makedirs("/tmp/receipt", exist_ok=True)
    rows = []
    for i in range(24):
        img, text = render_receipt_line(src, bank, rng)
        print(i, img.size, repr(text))
        rows.append(img.resize((max(1, img.width * 40 // img.height), 40)))
    sheet = Image.new("L", (max(r.width for r in rows), sum(r.height + 4 for r in rows)), 128)
    y = 0
    for r in rows:
        sheet.paste(r, (0, y))
        y += r.height + 4
    sheet.save("/tmp/receipt/sheet.png")
