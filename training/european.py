"""Text for lines in Central and Eastern European languages, Greek and Cyrillic, from what Debian installs.

Prose: the translated manual pages of manpages-l10n and the gettext catalogues (.mo) of installed packages; words:
the hunspell dictionaries. Nothing here reads ../shared/eval, and none of it is the evaluation set's source
(bench/european-lines.py cuts its lines from TeX Live's language documentation, which is not read here).
"""
import glob
import gettext
import gzip
import os
import random
import re
import struct

from charset import CHARS

_CHARSET = set(CHARS)

# language -> (hunspell dictionary, script group)
LANGS = {
    "pl": ("pl_PL", "latin"), "cs": ("cs_CZ", "latin"), "sk": ("sk_SK", "latin"), "hu": ("hu_HU", "latin"),
    "ro": ("ro_RO", "latin"), "tr": ("tr_TR", "latin"), "hr": ("hr_HR", "latin"), "sl": ("sl_SI", "latin"),
    "lv": ("lv_LV", "latin"), "lt": ("lt_LT", "latin"), "el": ("el_GR", "greek"), "ru": ("ru_RU", "cyrillic"),
    "uk": ("uk_UA", "cyrillic"), "bg": ("bg_BG", "cyrillic"), "sr": ("sr_RS", "cyrillic"),
}
# How often each script group is drawn: Latin letters with diacritics are the most languages, Greek the fewest.
GROUP_SHARE = {"latin": 0.45, "cyrillic": 0.35, "greek": 0.2}

_ROFF_CHARS = {"em": "—", "en": "–", "bu": "•", "aq": "'", "dq": '"', "lq": "“", "rq": "”", "hy": "-", "co": "©",
               "rg": "®", "de": "°", "mu": "×", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›", "oq": "‘", "cq": "’"}


def clean(s: str) -> str:
    s = s.replace("\t", " ").replace("\u00a0", " ").replace("\n", " ")
    s = "".join(c for c in s if c in _CHARSET)
    return re.sub(r" +", " ", s).strip()


def roff_text(src: str) -> list[str]:
    """The paragraphs of a man page's roff source, its markup dropped (a reader's approximation, not groff)."""
    paras, cur = [], []
    for line in src.split("\n"):
        if line.startswith((".", "'")):
            m = re.match(r"\.(?:B|I|BR|IR|RB|RI|BI|IB|SM|SB)\s+(.*)", line)
            if m:
                cur.append(m.group(1).replace('"', ""))
                continue
            if cur and re.match(r"\.(?:PP|P|LP|SH|SS|TP|IP|sp|br|HP)\b", line):
                paras.append(" ".join(cur))
                cur = []
            continue
        if not line.strip():
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        cur.append(line)
    if cur:
        paras.append(" ".join(cur))
    out = []
    for p in paras:
        p = re.sub(r"\\\((..)", lambda m: _ROFF_CHARS.get(m.group(1), ""), p)
        p = re.sub(r"\\\[([^\]]*)\]", lambda m: _ROFF_CHARS.get(m.group(1), ""), p)
        p = re.sub(r"\\f(\(..|\[[^\]]*\]|.)", "", p)
        p = re.sub(r"\\s[+-]?\d", "", p)
        p = re.sub(r"\\\*(\(..|\[[^\]]*\]|.)", "", p)
        p = p.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\").replace("\\ ", " ").replace("\\|", "")
        p = clean(p)
        if len(p) > 20:
            out.append(p)
    return out


def load_prose(lang: str, max_pages: int = 250) -> list[str]:
    texts = []
    for path in sorted(glob.glob(f"/usr/share/man/{lang}/man*/*.gz"))[:max_pages]:
        try:
            texts += roff_text(gzip.open(path, "rt", encoding="utf-8", errors="ignore").read())
        except (OSError, EOFError):
            continue
    for path in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
        try:
            with open(path, "rb") as f:
                cat = gettext.GNUTranslations(f)._catalog
        except (OSError, UnicodeDecodeError, ValueError, struct.error):
            continue
        for key, val in cat.items():
            if not isinstance(val, str) or not val or (isinstance(key, str) and key == val):
                continue
            t = clean(re.sub(r"%[-+ #0-9.]*[a-zA-Z]|\{[^}]*\}|[_&](?=\w)", "", val))
            if len(t) > 12 and " " in t:
                texts.append(t)
    return texts


def load_words(dic: str) -> list[str]:
    aff, path = f"/usr/share/hunspell/{dic}.aff", f"/usr/share/hunspell/{dic}.dic"
    if not os.path.exists(path):
        return []
    enc = "utf-8"
    for line in open(aff, encoding="latin-1"):
        if line.startswith("SET "):
            enc = line.split()[1].strip().replace("microsoft-cp", "cp")
            break
    words = []
    for line in open(path, encoding=enc, errors="ignore").read().split("\n")[1:]:
        w = clean(line.split("/")[0].split("\t")[0].split(" ")[0])
        if w and not w.isdigit():
            words.append(w)
    return words


class EuropeanText:
    """Lines of text in the languages of LANGS, each line one language."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.prose, self.words, self.letters = {}, {}, {}
        for lang, (dic, _group) in LANGS.items():
            self.prose[lang] = load_prose(lang)
            self.words[lang] = load_words(dic)
            if not self.prose[lang] and not self.words[lang]:
                raise RuntimeError(f"no text for {lang}: apt-get install hunspell-{lang} (see training/README.md)")
            sample = "".join(self.rng.sample(self.prose[lang], min(400, len(self.prose[lang])))) + "".join(
                self.words[lang][:: max(1, len(self.words[lang]) // 3000)])
            self.letters[lang] = sorted({c for c in sample if c.isalpha() and ord(c) > 0x7F})
        self.by_group = {g: [l for l, (_d, gr) in LANGS.items() if gr == g] for g in GROUP_SHARE}

    def language(self) -> str:
        r = self.rng.random()
        for group, share in GROUP_SHARE.items():
            if r < share:
                return self.rng.choice(self.by_group[group])
            r -= share
        return "pl"

    def line(self, max_chars: int, lang: str | None = None) -> str:
        r, lang = self.rng, lang or self.language()
        n = r.randint(min(8, max_chars), max_chars)
        k = r.random()
        if k < 0.55 and self.prose[lang]:
            t = self._span(r.choice(self.prose[lang]), n)
        elif k < 0.85 and self.words[lang]:
            t = self._words(lang, n)
        elif k < 0.95:
            t = self._words(lang, n, numbers=True) if self.words[lang] else self._span(r.choice(self.prose[lang]), n)
        else:  # the language's own letters, uniformly, so that its rare ones are seen too
            t = " ".join("".join(r.choice(self.letters[lang]) for _ in range(r.randint(1, 7))) for _ in range(r.randint(1, 6)))
        if r.random() < 0.05:
            t = t.upper()
        return t[:max_chars].strip() or "a"

    def _span(self, t: str, n: int) -> str:
        if len(t) <= n:
            return t
        start = self.rng.randint(0, len(t) - n)
        while start > 0 and t[start - 1] != " ":
            start -= 1
        return t[start:start + n]

    def _words(self, lang: str, n: int, numbers: bool = False) -> str:
        r, out = self.rng, []
        while sum(len(w) + 1 for w in out) < n:
            w = r.choice(self.words[lang])
            if r.random() < 0.15:
                w = w.title()
            if numbers and r.random() < 0.3:
                w = r.choice([str(r.randint(0, 9999)), f"{r.randint(1, 31)}.{r.randint(1, 12)}.{r.randint(1950, 2030)}",
                              f"{r.uniform(0, 1000):.2f}".replace(".", r.choice([",", "."])), f"({r.randint(1, 99)})"])
            if r.random() < 0.12:
                w += r.choice([",", ".", ":", ";", "?", "!", " –", " —"])
            out.append(w)
        return " ".join(out)[:n]


if __name__ == "__main__":
    src = EuropeanText(3)
    for lang in LANGS:
        print(lang, len(src.prose[lang]), "texts", len(src.words[lang]), "words", "".join(src.letters[lang]))
        for _ in range(2):
            print("  ", src.line(90, lang))
