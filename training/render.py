"""Synthetic text lines: Debian's fonts, real-scan degradations, and the model's input normalisation.

`normalise` is the contract with the engine (src/engine/vision/preprocess.ts does the same): grey line crop,
height scaled to IMAGE_HEIGHT, contrast stretched so ink is 1 and paper is 0, width padded with 0.
"""
import glob
import io
import math
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from charset import CHARS

IMAGE_HEIGHT = 32
WIDTH_MULTIPLE = 4
MAX_WIDTH = 1600
# The widest crop the decoder reads whole (the engine cuts wider lines at word spaces): lines are trained up to
# 120 characters (train.py --cur-full); at 32 px, 960 px holds 120 characters of the narrowest 5% of the faces
# here (8 px a character) and 91 of the median face (10.5 px).
READ_WIDTH = 960
# ... and a line up to one vision pass wide is read whole if the CTC head counts at most this many characters in
# it (synthetic prose in held-out faces read whole: CER 0.3% at 105 characters, 0.5% at 115, 5.3% at 120, 11% at 130).
READ_CHARS = 110

_FONT_DIRS = ["/usr/share/fonts", "/usr/share/texmf/fonts/opentype", "/usr/share/texlive/texmf-dist/fonts/opentype"]
if os.environ.get("SPECULA_ASSETS"):  # a packed copy (training/pack_assets.py) on machines without the font packages
    _FONT_DIRS = [os.path.join(os.environ["SPECULA_ASSETS"], "fonts")]
# Decorative, symbol, math and small-caps faces: their glyphs do not spell the text they are given.
_SKIP = ["caps", "math", "chorus", "z003", "d050000l", "standardsymbols", "dingbat", "symbol", "thin", "unsl",
         "dunh", "quot", "cantarell", "keyboard"]
# Font folders whose faces are TeX-encoded (fonts-lyx, which python3-matplotlib pulls in: cmsy10, msbm10, wasy10,
# and cmr10, whose ASCII slots hold OT1's glyphs): a line set in them does not spell its label. Latin Modern
# covers Computer Modern in a real encoding.
_SKIP_DIRS = ["/lyx/"]


def _notdef_free(font: ImageFont.FreeTypeFont) -> set[str]:
    """Characters the font really has: a missing glyph renders as the .notdef box (or nothing)."""
    def mask(ch):
        m = font.getmask(ch)
        return (m.size, bytes(m))
    notdef = {mask("\uffff"), mask("\U0010fffd")}
    ok = {" "}
    for ch in CHARS[1:]:
        m = mask(ch)
        if m not in notdef and m[0][0] > 0:
            ok.add(ch)
    return ok


class FontBank:
    """All usable font files, grouped by family so that families with many files do not dominate."""

    def __init__(self, held_out: bool = False):
        files = []
        for d in _FONT_DIRS:
            files += glob.glob(os.path.join(d, "**", "*.ttf"), recursive=True)
            files += glob.glob(os.path.join(d, "**", "*.otf"), recursive=True)
        seen = set()
        self.families: dict[str, list[tuple[str, set[str], bool, bool]]] = {}
        for path in sorted(files):
            base = os.path.basename(path).lower()
            if any(s in base for s in _SKIP) or any(d in path for d in _SKIP_DIRS) or base in seen:
                continue
            seen.add(base)
            try:
                font = ImageFont.truetype(path, 24)
                family, style = font.getname()
            except OSError:
                continue
            if any(s in (family + style).lower() for s in _SKIP):
                continue
            have = _notdef_free(font)
            if len(have) < 90:  # not a text face for our alphabet
                continue
            st = style.lower()
            bold = any(k in st for k in ["bold", "black", "demi", "heavy", "extrabold", "semibold"])
            italic = "italic" in st or "oblique" in st or "slanted" in st
            key = family.split(",")[0].replace(" Condensed", "").replace(" Narrow", "").replace(" Cn", "")
            self.families.setdefault(key, []).append((path, have, bold, italic))
        if not self.families:
            raise RuntimeError("no fonts found: install the font packages listed in training/README.md")
        self.names = sorted(self.families)
        self._cache: dict[tuple[str, int], ImageFont.FreeTypeFont] = {}

    def pick(self, rng: random.Random):
        fam = self.families[rng.choice(self.names)]
        return rng.choice(fam)

    def pick_for(self, text: str, rng: random.Random, tries: int = 40):
        """A face that has every character of `text` (a Greek or Cyrillic line is not set in a Latin-only face);
        the best of `tries` draws when none has them all."""
        need = set(text) - {" "}
        best, best_missing = None, None
        for _ in range(tries):
            face = self.pick(rng)
            missing = len(need - face[1])
            if missing == 0:
                return face
            if best is None or missing < best_missing:
                best, best_missing = face, missing
        return best

    def font(self, path: str, size: int) -> ImageFont.FreeTypeFont:
        key = (path, size)
        if key not in self._cache:
            if len(self._cache) > 3000:
                self._cache.clear()
            self._cache[key] = ImageFont.truetype(path, size)
        return self._cache[key]


def render_line(text: str, other: str, bank: FontBank, rng: random.Random, face=None, size: int = 0) -> tuple[Image.Image, str]:
    """Render `text` (characters the chosen font lacks are dropped from the label too) with degradations.
    face (a FontBank.pick) and size: set for the lines of one region, which share their type."""
    path, have, _bold, _italic = face or bank.pick(rng)
    text = "".join(c for c in text if c in have).strip() or "a"
    size = size or rng.randint(14, 48)
    font = bank.font(path, size)
    ascent, descent = font.getmetrics()
    line_h = ascent + descent
    l, _t, r, _b = font.getbbox(text)
    pad_l = rng.randint(0, max(1, size // 2))
    pad_r = rng.randint(0, max(1, size // 2))
    pad_t = int(rng.uniform(-0.12, 0.35) * line_h)
    pad_b = int(rng.uniform(-0.12, 0.35) * line_h)
    w = max(4, r - l + pad_l + pad_r)
    h = max(8, line_h + pad_t + pad_b)
    bg = rng.randint(190, 255)
    ink = rng.randint(0, min(110, bg - 80))
    img = Image.new("L", (w, h), bg)
    draw = ImageDraw.Draw(img)
    stroke = 1 if rng.random() < 0.05 and size > 20 else 0
    draw.text((pad_l - l, pad_t), text, font=font, fill=ink, stroke_width=stroke, stroke_fill=ink)
    if rng.random() < 0.3 and other:  # a sliver of the neighbouring line above or below
        gap = rng.uniform(1.0, 1.35) * line_h
        y = pad_t - gap if rng.random() < 0.5 else pad_t + gap
        draw.text((pad_l - l + rng.randint(-size, size), y), other, font=font, fill=ink)
    if rng.random() < 0.05:  # a rule under the text, as in tables and forms
        y = min(h - 1, pad_t + ascent + rng.randint(1, max(2, descent)))
        draw.line([(0, y), (w, y)], fill=ink, width=1)
    img = degrade(img, bg, rng)
    return img, text


def degrade(img: Image.Image, bg: int, rng: random.Random) -> Image.Image:
    if rng.random() < 0.35:
        # Slight skew, as a line finder's box around a slanted line holds it: the whole line stays in the crop.
        # Turned inside its own frame, a long line's ends left it (at up to 1.5 degrees, 4% of turned lines lost a tenth
        # of their ink) while the label kept their characters, which taught the decoder to invent line ends.
        # So the frame grows to hold it, and a long line turns less (its rise at most a third of the height).
        deg = rng.uniform(-1.5, 1.5)
        most = math.degrees(math.atan(img.height / 3 / img.width))
        img = img.rotate(max(-most, min(most, deg)), resample=Image.BILINEAR, expand=True, fillcolor=bg)
    if rng.random() < 0.3:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.3)))
    if rng.random() < 0.3:  # low resolution: shrink and blow back up
        f = rng.uniform(0.35, 0.8)
        small = img.resize((max(2, int(img.width * f)), max(2, int(img.height * f))), Image.BILINEAR)
        img = small.resize(img.size, rng.choice([Image.NEAREST, Image.BILINEAR]))
    if rng.random() < 0.3:
        a = np.asarray(img, dtype=np.float32)
        a = a + np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(3, 25), a.shape)
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.15:  # binarised scan
        # Between this image's own ink and paper, as a scanner's adaptive threshold sets it: a fixed level erased
        # small blurred text entirely (about 2% of all lines came out blank or as scattered dots, still labelled).
        a = np.asarray(img)
        ink, paper = float(np.percentile(a, 1)), float(np.median(a))
        # (The draw is the one the fixed level used, so every other line of a seeded set stays as it was.)
        thr = ink + (paper - ink) * (0.3 + 0.3 * (rng.randint(100, 180) - 100) / 80)
        img = img.point(lambda p: 255 if p > thr else 0)
    if rng.random() < 0.3:
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=rng.randint(15, 90))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return img


def normalise(img: Image.Image, resample=Image.BILINEAR) -> np.ndarray:
    """Grey crop -> float32 [IMAGE_HEIGHT, W], ink 1, paper 0, W a multiple of WIDTH_MULTIPLE."""
    g = img.convert("L")
    w = max(8, round(g.width * IMAGE_HEIGHT / g.height))
    w = min(w, MAX_WIDTH)
    g = g.resize((w, IMAGE_HEIGHT), resample)
    a = np.asarray(g, dtype=np.float32)
    lo, hi = float(a.min()), float(a.max())
    x = (hi - a) / max(hi - lo, 32.0)
    padded = -(-w // WIDTH_MULTIPLE) * WIDTH_MULTIPLE
    out = np.zeros((IMAGE_HEIGHT, padded), dtype=np.float32)
    out[:, :w] = x
    return out


RESAMPLERS = [Image.BILINEAR, Image.BICUBIC, Image.LANCZOS, Image.BOX]


if __name__ == "__main__":
    from textgen import TextSource
    bank = FontBank()
    print(len(bank.names), "families:", ", ".join(bank.names))
    src = TextSource(3)
    rng = random.Random(5)
    os.makedirs("/tmp/synth", exist_ok=True)
    for i in range(12):
        img, text = render_line(src.line(90), src.line(90), bank, rng)
        img.save(f"/tmp/synth/{i}.png")
        print(i, img.size, repr(text))
