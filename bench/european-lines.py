"""The European line set: real typeset lines in eleven languages beyond Latin-1, never trained on.

Each language's lines are cut from its translation of "The Not So Short Introduction to LaTeX" (lshort) or, for
Greek, from Greek-language package manuals, for Hungarian from the huaz package's manual and for Serbian from the
Serbian TeX Live guide, as Debian's texlive-lang-* packages ship them: born-digital PDFs whose
text layer labels each line (training/pdf_lines.py's crops and trust checks; pdf_lines.py leaves these packages'
PDFs out of every training pool). Kept: lines that hold the language's own letters (a letter beyond Latin-1 for
the Latin-script languages; Greek or Cyrillic for at least half the letters of the others), so that a line of
English or of LaTeX commands does not count as Polish. Each language's folder has labels.tsv and meta.json (the
tesseract language pack it is compared with); `npm run eval -- --suite lines --line-dir DIR,DIR,...` scores them.

    apt-get install texlive-lang-polish texlive-lang-czechslovak texlive-lang-european texlive-lang-cyrillic \
      texlive-lang-greek tesseract-ocr-pol tesseract-ocr-ces tesseract-ocr-slk tesseract-ocr-slv tesseract-ocr-tur \
      tesseract-ocr-rus tesseract-ocr-ukr tesseract-ocr-bul tesseract-ocr-ell tesseract-ocr-hun tesseract-ocr-srp
    /usr/bin/python3 bench/european-lines.py --out bench/european
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "training"))
from pdf_lines import page_count, page_lines  # noqa: E402

DOC = "/usr/share/doc/texlive-doc/latex"
# language -> (script, tesseract's language pack, source PDFs)
SOURCES = {
    "pl": ("latin", "pol", [f"{DOC}/lshort-polish/lshort-pl.pdf"]),
    "cs": ("latin", "ces", [f"{DOC}/lshort-czech/lshort-cs.pdf"]),
    "sk": ("latin", "slk", [f"{DOC}/lshort-slovak/slshorte.pdf"]),
    "sl": ("latin", "slv", [f"{DOC}/lshort-slovenian/lshort-slovenian.pdf"]),
    "tr": ("latin", "tur", [f"{DOC}/lshort-turkish/lshort-tr.pdf"]),
    "ru": ("cyrillic", "rus", [f"{DOC}/lshort-russian/lshortru.pdf"]),  # its text layer: see LAYER_CODEC
    "uk": ("cyrillic", "ukr", [f"{DOC}/lshort-ukr/lshort-ukr.pdf"]),
    "bg": ("cyrillic", "bul", [f"{DOC}/lshort-bulgarian/lshort-bg.pdf"]),
    "el": ("greek", "ell", [f"{DOC}/begingreek/begingreek.pdf", f"{DOC}/greektonoi/greektonoi.pdf"]),
    "hu": ("latin", "hun", [f"{DOC}/huaz/huaz.pdf"]),
    "sr": ("cyrillic", "srp", ["/usr/share/doc/texlive-doc/texlive/texlive-sr/texlive-sr.pdf"]),
}

# The Russian lshort's fonts map Windows-1251 codes to Cyrillic glyphs without a Unicode table, so its text layer
# reads them as Latin-1 ("Ýòî" for "Это"): decoded back, a line's label is the text its glyphs show.
LAYER_CODEC = {"ru": "cp1251"}

# The Serbian TeX Live guide's font (Old Standard) sets Serbian б and the italic г д п т as glyphs its text layer
# names by Adobe's private-use code points (afii10063, afii10064, afii10192, afii10831, afii10832).
LAYER_TABLE = {"sr": {0xF6C4: "г", 0xF6C5: "б", 0xF6C6: "д", 0xF6C7: "п", 0xF6C8: "т"}}


def relabel(lang: str, text: str) -> str | None:
    codec = LAYER_CODEC.get(lang)
    if not codec:
        return text
    try:
        return text.encode("latin-1").decode(codec)
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None


def in_language(text: str, script: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if script == "latin":
        return any(0x100 <= ord(c) < 0x250 for c in letters)
    lo, hi = (0x370, 0x400) if script == "greek" else (0x400, 0x530)
    return len(letters) >= 3 and sum(lo <= ord(c) < hi for c in letters) >= 0.5 * len(letters)


def build(out: str, per_language: int, seed: int, only: list[str]) -> None:
    for lang, (script, tess, pdfs) in SOURCES.items():
        if only and lang not in only:
            continue
        rng = random.Random(f"{seed}-{lang}")
        pdfs = [p for p in pdfs if os.path.exists(p)]
        if not pdfs:
            print(f"{lang}: no source PDF; install its texlive-lang-* package", file=sys.stderr)
            continue
        folder = os.path.join(out, lang)
        os.makedirs(folder, exist_ok=True)
        pages = [(p, n) for p in pdfs for n in range(1, page_count(p) + 1)]
        rng.shuffle(pages)
        rows = []
        for pdf, page in pages:
            lines = [(img, relabel(lang, text)) for img, text in page_lines(pdf, page, rng, LAYER_TABLE.get(lang))]
            lines = [(img, text) for img, text in lines if text and in_language(text, script)]
            for img, text in rng.sample(lines, min(len(lines), 4)):  # a few a page: many pages, not a few
                name = f"{lang}-{len(rows):04d}.png"
                img.save(os.path.join(folder, name))
                rows.append(f"{name}\t{text}\t{os.path.basename(pdf)}:{page}")
            if len(rows) >= per_language:
                break
        with open(os.path.join(folder, "labels.tsv"), "w", encoding="utf-8") as f:
            f.write("\n".join(rows[:per_language]) + "\n")
        meta = {"language": lang, "script": script, "tesseract": tess, "sources": [os.path.basename(p) for p in pdfs]}
        json.dump(meta, open(os.path.join(folder, "meta.json"), "w"), indent=1)
        print(f"{lang}: {min(len(rows), per_language)} lines", file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-language", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*", default=[], help="these languages only")
    a = ap.parse_args()
    build(a.out, a.per_language, a.seed, a.only)
