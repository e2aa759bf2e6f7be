"""Lines for the script gate: text in scripts the model reads (Latin, Greek, Cyrillic) and in scripts it was never
taught.

Given Hangul, Han, kana, Hebrew, Arabic, Devanagari or Thai, the decoder still writes something, token by token, until
its length cap: confident-looking garbage that costs more decoding than a real line. The gate (script_gate.py) learns
to tell them apart, and which script a line is in, from what the CTC head says of a line; this makes its examples.

Positives ("unread"): lines mostly in one of those scripts, in any Debian font that has its glyphs, with some digits,
punctuation and Latin words mixed in, as real documents in those scripts have. Negatives ("read"): the training
generator's own lines (prose, code, numbers, receipts), lines in european.py's languages, Greek and Cyrillic
syllables, and Latin lines with a few foreign letters, all with render.py's scan degradations.

Nothing here looks at ../shared/eval. Text in other scripts is random syllables and words of each script's letters:
the gate sees shapes, not language.

    /usr/bin/python3 training/script_lines.py --out /tmp/script-lines --n 6000 --seed 1
writes OUT/NNNNN.png and OUT/labels.jsonl ({"file", "unread", "script", "text"} per line).
"""
import argparse
import glob
import json
import os
import random

from PIL import Image, ImageDraw, ImageFont

from european import LANGS, EuropeanText
from receipt import render_receipt_line
from render import FontBank, degrade, render_line
from textgen import TextSource

_HANGUL = (0xAC00, 0xD7A3)
# Each script: letters to draw from, and the word lengths its text has.
_SCRIPTS: dict[str, tuple[list[str], tuple[int, int]]] = {
    "hangul": ([chr(c) for c in range(*_HANGUL)], (1, 5)),
    "han": ([chr(c) for c in range(0x4E00, 0x9FA5)], (2, 12)),
    "kana": ([chr(c) for c in range(0x3041, 0x3097)] + [chr(c) for c in range(0x30A1, 0x30FB)], (2, 10)),
    "cyrillic": ([chr(c) for c in range(0x0410, 0x0450)], (1, 11)),
    "greek": ([chr(c) for c in list(range(0x0391, 0x03A2)) + list(range(0x03A3, 0x03AA)) + list(range(0x03B1, 0x03CA))], (1, 10)),
    "hebrew": ([chr(c) for c in range(0x05D0, 0x05EB)], (2, 7)),
    "arabic": ([chr(c) for c in range(0x0621, 0x064B)], (2, 8)),
    "devanagari": ([chr(c) for c in range(0x0905, 0x0915)] + [chr(c) for c in range(0x0915, 0x0939)] + [chr(c) for c in range(0x093E, 0x094D)], (2, 8)),
    "thai": ([chr(c) for c in range(0x0E01, 0x0E2F)] + [chr(c) for c in range(0x0E30, 0x0E3B)], (2, 9)),
}
# Scripts the line model reads since its European vocabulary (charset.EUROPEAN): their lines are negatives.
READ_SCRIPTS = {"cyrillic", "greek"}
# Scripts written without spaces between words.
_UNSPACED = {"han", "kana", "thai"}
# Latin letters outside the model's alphabet, met in Latin-script languages.
_LATIN_EXT = "ąćęłńśźżĄĆĘŁŃŚŹŻčďěňřšťůžČĎĚŇŘŠŤŮŽğışĞİŞőűŐŰāēīūĀĒĪŪăâđêôơưĂÂĐÊÔƠƯ"
_GREEK_SIGNS = "αβγδεθλμπσφωΔΣΩ"


def _has_glyphs(font: ImageFont.FreeTypeFont, sample: str) -> bool:
    def mask(ch):
        m = font.getmask(ch)
        return (m.size, bytes(m))
    notdef = {mask("\uffff"), mask("\U0010fffd")}
    return all(mask(ch) not in notdef and mask(ch)[0][0] > 0 for ch in sample)


def script_fonts() -> dict[str, list[str]]:
    """Per script, the font files that draw it (checked on a few of its letters)."""
    files = sorted(set(glob.glob("/usr/share/fonts/**/*.tt[fc]", recursive=True) + glob.glob("/usr/share/fonts/**/*.otf", recursive=True)))
    rng = random.Random(0)
    out: dict[str, list[str]] = {s: [] for s in _SCRIPTS}
    for path in files:
        try:
            font = ImageFont.truetype(path, 24)
        except OSError:
            continue
        for s, (letters, _) in _SCRIPTS.items():
            if _has_glyphs(font, "".join(rng.sample(letters, 6))):
                out[s].append(path)
    return {s: f for s, f in out.items() if f}


class ScriptText:
    def __init__(self, src: TextSource, rng: random.Random):
        self.src = src
        self.rng = rng

    def word(self, script: str) -> str:
        letters, (lo, hi) = _SCRIPTS[script]
        return "".join(self.rng.choice(letters) for _ in range(self.rng.randint(lo, hi)))

    def foreign_line(self, script: str, max_chars: int) -> str:
        """Mostly `script`, with numbers, punctuation and a Latin word now and then."""
        r = self.rng
        target = r.randint(3, max_chars)
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < target:
            k = r.random()
            if k < 0.8:
                parts.append(self.word(script))
            elif k < 0.9:
                parts.append(self.src._number())
            elif k < 0.95:
                parts.append(self.src._word())
            else:
                parts.append(r.choice(["(", ")", ":", "-", "·", "/", "%", "[1]", "。", "、"]))
        sep = "" if script in _UNSPACED and r.random() < 0.7 else " "
        return sep.join(parts)[:max(target, 2)].strip()

    def latin_with_foreign(self) -> str:
        """A Latin line with a few letters the model lacks: it still reads the rest."""
        r = self.rng
        words = self.src.line(r.randint(20, 90)).split(" ")
        for _ in range(r.randint(1, 2)):
            i = r.randrange(len(words))
            k = r.random()
            if k < 0.4 and words[i]:
                j = r.randrange(len(words[i]))
                words[i] = words[i][:j] + r.choice(_LATIN_EXT) + words[i][j + 1:]
            elif k < 0.7:
                words.insert(i, r.choice(_GREEK_SIGNS))
            else:
                words.insert(i, self.word(r.choice(list(_SCRIPTS))))
        return " ".join(words)


_notdefs: dict[str, set] = {}
_fonts: dict[tuple[str, int], ImageFont.FreeTypeFont] = {}


def drawable(text: str, path: str) -> str:
    """`text` less the characters the font at `path` has no glyph for (they would draw as a box, or nothing)."""
    font = _font(path, 24)
    if path not in _notdefs:
        _notdefs[path] = {(font.getmask(c).size, bytes(font.getmask(c))) for c in "\uffff\U0010fffd"}
    def ok(c):
        m = font.getmask(c)
        return c == " " or (m.size[0] > 0 and (m.size, bytes(m)) not in _notdefs[path])
    return " ".join("".join(c for c in text if ok(c)).split())


def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    if (path, size) not in _fonts:
        if len(_fonts) > 2000:
            _fonts.clear()
        _fonts[(path, size)] = ImageFont.truetype(path, size)
    return _fonts[(path, size)]


def foreign_share(text: str) -> float:
    """Share of the non-space characters that are letters of the scripts the model does not read."""
    chars = [c for c in text if not c.isspace()]
    letters = {c for s, (letters, _) in _SCRIPTS.items() if s not in READ_SCRIPTS for c in letters}
    return sum(c in letters for c in chars) / max(1, len(chars))


def draw_line(text: str, path: str, rng: random.Random) -> Image.Image:
    """`text` (already drawable in the font at `path`), padded and degraded as render.py's lines are."""
    size = rng.randint(14, 44)
    font = _font(path, size)
    ascent, descent = font.getmetrics()
    l, _t, r, _b = font.getbbox(text)
    pad = lambda: rng.randint(0, max(1, size // 2))  # noqa: E731
    pad_l, pad_r = pad(), pad()
    pad_t = int(rng.uniform(-0.05, 0.3) * (ascent + descent))
    w = max(8, r - l + pad_l + pad_r)
    h = max(8, ascent + descent + pad_t + int(rng.uniform(0, 0.3) * (ascent + descent)))
    bg = rng.randint(190, 255)
    ink = rng.randint(0, min(110, bg - 80))
    img = Image.new("L", (w, h), bg)
    ImageDraw.Draw(img).text((pad_l - l, pad_t), text, font=font, fill=ink)
    return degrade(img, bg, rng)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    src = TextSource(args.seed)
    bank = FontBank()
    fonts = script_fonts()
    texts = ScriptText(src, rng)
    euro = EuropeanText(args.seed)
    print("scripts and fonts:", {s: len(f) for s, f in fonts.items()})
    with open(os.path.join(args.out, "labels.jsonl"), "w", encoding="utf-8") as labels:
        for i in range(args.n):
            k = rng.random()
            if k < 0.5:
                script = rng.choice(sorted(fonts))
                path = rng.choice(fonts[script])
                text = drawable(texts.foreign_line(script, 60), path) or "x"
                # A line whose font drew little of the script is labelled by what it shows.
                img, unread = draw_line(text, path, rng), foreign_share(text) >= 0.5
                script = script if unread or script in READ_SCRIPTS else "latin+"
            elif k < 0.65:
                img, text = render_line(src.line(rng.randint(4, 100)), "", bank, rng)
                script, unread = "latin", False
            elif k < 0.8:
                lang = euro.language()
                text = euro.line(rng.randint(4, 100), lang)
                img, text = render_line(text, "", bank, rng, face=bank.pick_for(text, rng))
                script, unread = LANGS[lang][1], False
            elif k < 0.9:
                img, text = render_receipt_line(src, bank, rng)
                script, unread = "receipt", False
            else:
                path = rng.choice([p for p, *_ in sum(bank.families.values(), [])])
                text = drawable(texts.latin_with_foreign(), path) or "x"
                img, script, unread = draw_line(text, path, rng), "latin+", False
            name = f"{i:05d}.png"
            img.save(os.path.join(args.out, name))
            labels.write(json.dumps({"file": name, "unread": unread, "script": script, "text": text}, ensure_ascii=False) + "\n")
            if i % 1000 == 0:
                print(i, flush=True)


if __name__ == "__main__":
    main()
