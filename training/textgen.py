"""Text for synthetic lines, drawn from several sources so the model sees what documents hold.

Sources: prose (Debian's fortunes and licence texts), word lists in six Western European languages,
numbers, dates, prices, identifiers, URLs and e-mails, punctuation-heavy strings, citations, names with ™ ® ©, and
uniformly random characters so that rare glyphs are seen too. Nothing here reads ../shared/eval.
"""
import glob
import os
import random
import re

from charset import CHARS

_CHARSET = set(CHARS)
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_MON = [m[:3] for m in _MONTHS]
_TLDS = ["com", "org", "net", "io", "de", "fr", "co.uk", "edu", "gov", "eu"]
_CURRENCY = ["$", "€", "£", "¥", "USD ", "EUR ", "CHF "]
_PUNCT = list(".,;:!?-–—()[]{}\"'“”‘’/\\|@#%&*+=<>_~^`§¶•…°±×÷")


def _clean(s: str) -> str:
    s = s.replace("\t", " ").replace("\u00a0", " ")
    s = "".join(c for c in s if c in _CHARSET)
    return re.sub(r" +", " ", s).strip()


# A packed copy of the corpora (training/pack_assets.py) for machines without Debian's packages.
ASSETS = os.environ.get("SPECULA_ASSETS")


class TextSource:
    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        if ASSETS:
            self.prose, self.words, self.code = self._load_packed(ASSETS)
        else:
            self.prose = self._load_prose()
            self.words = self._load_words()
            self.code = self._load_code()

    @staticmethod
    def _load_packed(root: str):
        def lines(name):
            return [t for t in open(os.path.join(root, name), encoding="utf-8").read().split("\n") if t]
        words = [lines(os.path.join("dict", f)) for f in sorted(os.listdir(os.path.join(root, "dict")))]
        return lines("prose.txt"), words, lines("code.txt")

    # ---- corpora installed by Debian packages -------------------------------------------------
    @staticmethod
    def _load_prose() -> list[str]:
        texts = []
        for path in glob.glob("/usr/share/games/fortunes/*"):
            if os.path.isdir(path) or "." in os.path.basename(path):
                continue
            try:
                raw = open(path, encoding="utf-8", errors="ignore").read()
            except OSError:
                continue
            for chunk in raw.split("\n%\n"):
                t = _clean(" ".join(chunk.split()))
                if len(t) > 20:
                    texts.append(t)
        for path in glob.glob("/usr/share/common-licenses/*"):
            if os.path.isfile(path):
                raw = open(path, encoding="utf-8", errors="ignore").read()
                for para in raw.split("\n\n"):
                    t = _clean(" ".join(para.split()))
                    if len(t) > 20:
                        texts.append(t)
        if not texts:
            raise RuntimeError("no prose corpus: apt-get install fortunes (see training/README.md)")
        return texts

    @staticmethod
    def _load_words() -> list[list[str]]:
        lists = []
        for name in ["american-english", "british-english", "french", "ngerman", "spanish", "italian"]:
            path = f"/usr/share/dict/{name}"
            if os.path.exists(path):
                ws = [_clean(w) for w in open(path, encoding="utf-8", errors="ignore").read().split("\n")]
                ws = [w for w in ws if w and "'" not in w[-2:]]
                if ws:
                    lists.append(ws)
        if not lists:
            raise RuntimeError("no word lists: apt-get install wamerican wfrench wngerman ...")
        return lists

    @staticmethod
    def _load_code() -> list[str]:
        lines = []
        for path in sorted(glob.glob("/usr/lib/python3*/*.py"))[:80]:
            for line in open(path, encoding="utf-8", errors="ignore"):
                t = _clean(line)
                if len(t) > 10:
                    lines.append(t)
        return lines or ["x = f(a, b) + 1"]

    # ---- generated pieces ------------------------------------------------------------------
    def _number(self) -> str:
        r = self.rng
        k = r.random()
        if k < 0.3:
            return str(r.randint(0, 10 ** r.randint(1, 7)))
        if k < 0.5:
            return f"{r.uniform(-1000, 10000):,.{r.randint(1, 3)}f}"
        if k < 0.65:
            return f"{r.uniform(0, 100):.{r.randint(0, 2)}f}%"
        if k < 0.8:
            return f"{r.uniform(0, 10):.2f} ± {r.uniform(0, 1):.2f}"
        if k < 0.9:
            return f"{r.randint(1, 9)}.{r.randint(0, 99):02d}e{r.choice(['-', '+', ''])}{r.randint(1, 12)}"
        return f"({r.randint(1, 999)})"

    def _date(self) -> str:
        r = self.rng
        y, m, d = r.randint(1900, 2035), r.randint(1, 12), r.randint(1, 28)
        return r.choice([f"{y}-{m:02d}-{d:02d}", f"{d}/{m}/{y}", f"{m:02d}/{d:02d}/{y % 100:02d}",
                         f"{d} {_MONTHS[m - 1]} {y}", f"{_MONTHS[m - 1]} {d}, {y}", f"{d}. {_MON[m - 1]} {y}",
                         f"{d:02d}.{m:02d}.{y}", f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}"])

    def _price(self) -> str:
        r = self.rng
        v = r.choice([r.uniform(0, 100), r.uniform(100, 100000)])
        cur = r.choice(_CURRENCY)
        s = f"{v:,.2f}"
        if r.random() < 0.3:  # European style 1.234,56
            s = s.replace(",", "_").replace(".", ",").replace("_", ".")
        return f"{cur}{s}" if r.random() < 0.7 else f"{s} {cur.strip()}"

    def _ident(self) -> str:
        r = self.rng
        alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        k = r.random()
        if k < 0.3:
            return "".join(r.choice(alnum) for _ in range(r.randint(4, 12)))
        if k < 0.5:
            return "-".join("".join(r.choice(alnum) for _ in range(r.randint(2, 5))) for _ in range(r.randint(2, 4)))
        if k < 0.7:
            w = self._word().lower()
            return r.choice([f"{w}_{r.randint(0, 99)}", f"{w}{r.choice(alnum)}{r.randint(1, 9)}", f"get{w.title()}()"])
        if k < 0.85:
            return f"ISBN {r.randint(100, 999)}-{r.randint(0, 9)}-{r.randint(100, 999)}-{r.randint(10000, 99999)}-{r.randint(0, 9)}"
        return f"arXiv:{r.randint(1000, 2599)}.{r.randint(1000, 99999):05d}"

    def _url(self) -> str:
        r = self.rng
        w1, w2 = self._word().lower(), self._word().lower()
        k = r.random()
        if k < 0.4:
            return f"https://{r.choice(['www.', ''])}{w1}.{r.choice(_TLDS)}/{w2}{r.choice(['', '.html', '/', '?id=' + str(r.randint(1, 999))])}"
        if k < 0.7:
            return f"{w1}.{w2}@{self._word().lower()}.{r.choice(_TLDS)}"
        return f"doi:10.{r.randint(1000, 9999)}/{w1[:6]}.{r.randint(100, 99999)}"

    def _punct(self) -> str:
        r = self.rng
        parts = []
        for _ in range(r.randint(2, 6)):
            if r.random() < 0.5:
                parts.append("".join(r.choice(_PUNCT) for _ in range(r.randint(1, 4))))
            else:
                w = self._word()
                parts.append(r.choice([f"({w})", f"“{w}”", f"'{w}'", f"[{r.randint(1, 99)}]", f"{w}:", f"{w};", f"{w}—", f"«{w}»", f"{w}…"]))
        return " ".join(parts)

    def _citation(self) -> str:
        r = self.rng
        name = self._word().title()
        return r.choice([f"{name} et al. ({r.randint(1950, 2025)})", f"[{r.randint(1, 60)}, {r.randint(1, 60)}]",
                         f"Fig. {r.randint(1, 12)}{r.choice(['', 'a', 'b'])}", f"Table {r.randint(1, 9)}",
                         f"Eq. ({r.randint(1, 40)})", f"pp. {r.randint(1, 300)}–{r.randint(301, 900)}",
                         f"Vol. {r.randint(1, 80)}, No. {r.randint(1, 12)}", f"§ {r.randint(1, 20)}.{r.randint(1, 9)}"])

    def _marked(self) -> str:
        """A product or company name with its trade mark, registered or copyright sign, as notices and packaging set
        them: without these the model that also reads Cyrillic takes a small ™ for "тм"."""
        r = self.rng
        name = self._word().title()
        sign = r.choice(["™", "™", "®", "®", "©"])
        return r.choice([f"{name}{sign}", f"{name}{sign} {self._word()}", f"{sign} {r.randint(1970, 2030)} {name}",
                         f"{name.upper()}{sign}", f"{name} {self._word().title()}{sign}"])

    def _random_chars(self) -> str:
        r = self.rng
        return "".join(r.choice(CHARS[1:]) for _ in range(r.randint(1, 6)))

    def _word(self) -> str:
        return self.rng.choice(self.rng.choice(self.words))

    def _prose_span(self, n: int) -> str:
        t = self.rng.choice(self.prose)
        if len(t) <= n:
            return t
        start = self.rng.randint(0, len(t) - n)
        while start > 0 and t[start - 1] != " ":
            start -= 1
        return t[start:start + n + 15]

    def paragraph(self, n_lines: int, width: int) -> list[str]:
        """Up to n_lines lines of running prose word-wrapped at `width` characters, as a paragraph is set: every
        line but the last about as long as the others."""
        words = " ".join(self._prose_span(n_lines * width + width) for _ in range(3)).split()
        lines, cur = [], ""
        for w in words:
            if cur and len(cur) + 1 + len(w) > width:
                lines.append(cur)
                cur = ""
                if len(lines) == n_lines:
                    break
            cur = f"{cur} {w}" if cur else w
        if cur and len(lines) < n_lines:
            lines.append(cur)
        return lines

    def _piece(self) -> str:
        r = self.rng
        k = r.random()
        if k < 0.27:
            return self._word()
        if k < 0.30:
            return self._marked()
        if k < 0.45:
            return self._number()
        if k < 0.52:
            return self._date()
        if k < 0.58:
            return self._price()
        if k < 0.65:
            return self._ident()
        if k < 0.71:
            return self._url()
        if k < 0.78:
            return self._punct()
        if k < 0.85:
            return self._citation()
        if k < 0.92:
            return self._random_chars()
        return self._prose_span(30)

    # ---- one line of text ----------------------------------------------------------------
    def line(self, max_chars: int) -> str:
        r = self.rng
        target = max(1, min(max_chars, int(r.triangular(1, max_chars, max_chars * 0.7))))
        k = r.random()
        if k < 0.45:
            t = self._prose_span(target)
        elif k < 0.55:
            t = self.rng.choice(self.code)
        else:
            parts = []
            while sum(len(p) + 1 for p in parts) < target:
                parts.append(self._piece())
            t = " ".join(parts)
        t = _clean(t)
        if len(t) > target:  # cut at a word boundary where one is close
            cut = t.rfind(" ", 0, target + 1)
            t = t[:cut] if cut > target * 0.6 else t[:target]
        t = t.strip()
        c = r.random()
        if c < 0.06:
            t = t.upper()
        elif c < 0.1:
            t = t.title()
        return t or self._word()[:max_chars]


if __name__ == "__main__":
    src = TextSource(1)
    print(len(src.prose), "prose", sum(len(w) for w in src.words), "words", len(src.code), "code")
    for n in [10, 40, 80, 120]:
        for _ in range(4):
            print(repr(src.line(n)))
