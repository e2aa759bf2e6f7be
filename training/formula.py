"""Synthetic formulas for the formula reader: LaTeX from an expression generator, rendered by matplotlib's mathtext
(Debian's python3-matplotlib) in five math font sets, cut as the page's formula crops are cut.

The label is one canonical spelling of the formula, so that the reader learns one answer per picture: every sub- and
superscript argument braced (`x^{2}`), no spaces except the one a control word needs before a letter
(`\\partial t`), `\\left( \\right)` only around tall content (a fraction, a big operator). The rendered source may
differ from the label where mathtext lacks a form a page uses: an integral's limits stacked above and below it
(MathJax/KaTeX display style) are drawn with `\\overset`/`\\underset` but labelled `\\int_{a}^{b}`.

Two draws in five (since 0.5.1) are textbook-shaped (Gen.textbook: exponentials of products, vector calculus,
definite integrals evaluated, derivatives written out, function values); the rest come from the general grammar.

  # a pool of clean crops (pdf_lines.py's pool format: PNGs and labels.tsv; degraded afresh at training time)
  /usr/bin/python3 training/formula.py --out training/runs/formula-pool --count 40000 --seed 1
  # the held-out crops (their own seed; any label the training pool holds is dropped)
  /usr/bin/python3 training/formula.py --out training/runs/formula-heldout --count 600 --seed 909 \\
      --exclude training/runs/formula-pool/labels.tsv
  # train from the line model with formulas in the mix
  /usr/bin/python3 training/train.py --run training/runs/formula --init training/checkpoints/specula-line-base.pt \\
      --pdf-lines training/runs/formula-pool --pdf-share 0.6 ...

Nothing here reads ../shared/eval.
"""
import argparse
import io
import os
import random
import sys

import numpy as np
from PIL import Image

LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
COMMON = "xyzabcfgnktijmpqrsuvw"
GREEK = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "kappa", "lambda", "mu", "nu", "xi",
         "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "varepsilon", "varphi", "vartheta", "varrho"]
GREEK_UPPER = ["Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega"]
RELATIONS = ["=", "=", "=", "=", "<", ">", "\\leq", "\\geq", "\\neq", "\\approx", "\\equiv", "\\sim", "\\in",
             "\\subset", "\\to", "\\propto", "\\subseteq"]
BINARY = ["+", "+", "+", "-", "-", "\\pm", "\\cdot", "\\times", "/"]
FUNCS = ["sin", "cos", "tan", "log", "ln", "exp", "det", "max", "min", "sup", "inf", "arg", "dim", "ker"]
ACCENTS = ["hat", "bar", "vec", "tilde", "dot"]
FONTSETS = ["cm", "cm", "cm", "stix", "stix", "dejavuserif", "dejavusans", "stixsans"]


class Gen:
    """A random formula as (label, source) pieces: source is what mathtext draws, label what the reader must say."""

    def __init__(self, rng: random.Random, textbook_share: float = 0.4):
        self.r = rng
        self.textbook_share = textbook_share

    def pick(self, xs):
        return self.r.choice(xs)

    def letter(self) -> str:
        r = self.r.random()
        if r < 0.55:
            return self.pick(COMMON)
        if r < 0.75:
            return self.pick(LOWER)
        return self.pick(UPPER)

    def number(self) -> str:
        r = self.r.random()
        if r < 0.6:
            return str(self.r.randint(0, 9))
        if r < 0.85:
            return str(self.r.randint(10, 999))
        return f"{self.r.randint(0, 99)}.{self.r.randint(0, 99)}"

    def symbol(self) -> tuple[str, str]:
        """An atom: letter, Greek letter, number, or a styled letter."""
        r = self.r.random()
        if r < 0.4:
            s = self.letter()
        elif r < 0.58:
            s = "\\" + self.pick(GREEK)
        elif r < 0.62:
            s = "\\" + self.pick(GREEK_UPPER)
        elif r < 0.75:
            s = self.number()
        elif r < 0.82:
            s = "\\mathbf{" + self.pick(UPPER + "xyzuvw") + "}"
        elif r < 0.86:
            s = "\\mathcal{" + self.pick(UPPER) + "}"
        elif r < 0.88:
            s = "\\mathbb{" + self.pick("RNZCQ") + "}"
        elif r < 0.93:
            s = "\\" + self.pick(ACCENTS) + "{" + self.pick(COMMON) + "}"
        elif r < 0.96:
            s = self.pick(["\\infty", "\\partial", "\\nabla", "\\hbar", "\\ell"])
        else:
            s = "\\mathrm{" + "".join(self.pick(LOWER) for _ in range(self.r.randint(2, 4))) + "}"
        return s, s

    def scripted(self, depth: int) -> tuple[str, str]:
        """An atom with a subscript, superscript, both, or a prime."""
        base, src = self.symbol()
        if base[0].isdigit() and self.r.random() < 0.7:
            return base, src
        r = self.r.random()
        if r < 0.35:
            return base, src
        sub = sup = None
        if r < 0.6:
            sub = self.small(depth)
        elif r < 0.85:
            sup = self.small(depth)
        elif r < 0.95:
            sub, sup = self.small(depth), self.small(depth)
        else:
            sup = ("\\prime", "\\prime")
        lab, s = base, src
        if sub:
            lab += "_{" + sub[0] + "}"
            s += "_{" + sub[1] + "}"
        if sup:
            lab += "^{" + sup[0] + "}"
            s += "^{" + sup[1] + "}"
        return lab, s

    def small(self, depth: int) -> tuple[str, str]:
        """A script's argument: short."""
        r = self.r.random()
        if r < 0.35:
            s = self.pick("ijknm" if self.r.random() < 0.6 else LOWER)
        elif r < 0.6:
            s = str(self.r.randint(0, 9)) if self.r.random() < 0.8 else str(self.r.randint(10, 99))
        elif r < 0.7:
            s = "\\" + self.pick(GREEK)
        elif r < 0.82:
            s = self.pick("ijknx") + self.pick(["+1", "-1", "+2"])
        elif r < 0.9 and depth < 2:
            s = "-" + self.pick("x" + "t" + "2" + "k")
        elif depth < 1:
            return self.sequence(depth + 1, 1, 2)
        else:
            s = self.pick("nmT*")
        return s, s

    def factor(self, depth: int) -> tuple[str, str]:
        r = self.r.random()
        # Structure thins out with depth: most real formulas nest a fraction or an operator once, rarely twice.
        if depth >= 2 or r < (0.55 if depth == 0 else 0.8):
            return self.scripted(depth)
        r = 0.5 + (r - (0.55 if depth == 0 else 0.8)) / (0.45 if depth == 0 else 0.2) * 0.5
        if r < 0.62:  # a function applied
            name, (a, sa) = self.letter() if self.r.random() < 0.5 else "\\" + self.pick(FUNCS), self.sequence(depth + 1, 1, 2)
            if name.startswith("\\") and self.r.random() < 0.3:
                return join([name, a]), join([name, sa])
            return f"{name}({a})", f"{name}({sa})"
        if r < 0.72:
            (a, sa), (b, sb) = self.sequence(depth + 1, 1, 3), self.sequence(depth + 1, 1, 2)
            return "\\frac{" + a + "}{" + b + "}", "\\frac{" + sa + "}{" + sb + "}"
        if r < 0.78:
            a, sa = self.sequence(depth + 1, 1, 3)
            return "\\sqrt{" + a + "}", "\\sqrt{" + sa + "}"
        if r < 0.88:  # brackets: \left \right only around tall content
            a, sa = self.sequence(depth + 1, 2, 3)
            o, c = self.pick([("(", ")"), ("(", ")"), ("[", "]"), ("|", "|"), ("\\{", "\\}")])
            tall = "\\frac" in a or "\\sum" in a or "\\int" in a or "\\prod" in a
            if tall:
                lab = "\\left" + o + a + "\\right" + c
                return lab, lab.replace(a, sa)
            tail = ""
            if self.r.random() < 0.3:
                tail = "^{" + self.small(depth)[0] + "}"
            return o + a + c + tail, o + sa + c + tail
        return self.bigop(depth)

    def bigop(self, depth: int) -> tuple[str, str]:
        kind = self.pick(["sum", "sum", "int", "int", "prod", "lim", "partial"])
        body, sbody = self.sequence(depth + 1, 1, 3)
        if kind == "partial":
            v = self.pick("xyzt")
            f = self.pick(["f", "u", "\\phi", "\\mathbf{B}", "\\mathbf{E}", "y"])
            lab = partial(f, v)
            return lab, lab
        if kind == "lim":
            v = self.pick("xnth")
            to = self.pick(["0", "\\infty", "a", "1"])
            op = "\\lim_{" + join([v, "\\to", to]) + "}"
            return join([op, body]), join([op, sbody])
        i = self.pick("ijkn")
        lo, hi = self.pick([(f"{i}=1", self.pick("nNkm")), (f"{i}=0", self.pick(["n", "\\infty", "N-1"])),
                            (i, None), (self.pick("ab0"), self.pick("b1x\\infty"))])
        if kind == "int":
            if self.r.random() < 0.25:
                lo, hi = None, None
            var = self.pick("xtsu")
            tail = "d" + var
            op = "\\int"
            lims = (("_{" + lo + "}") if lo else "") + (("^{" + hi + "}") if hi else "")
            lab = join([op + lims, body, tail])
            if lo and hi and self.r.random() < 0.5:  # display style: limits above and below, as MathJax and KaTeX set it
                return lab, join(["\\overset{" + hi + "}{\\underset{" + lo + "}{\\int}}", sbody, tail])
            return lab, join([op + lims, sbody, tail])
        op = "\\" + kind
        lim = (("_{" + lo + "}") if lo else "") + (("^{" + hi + "}") if hi else "")
        return join([op + lim, body]), join([op + lim, sbody])

    def sequence(self, depth: int, lo: int, hi: int) -> tuple[str, str]:
        """Factors joined by juxtaposition or binary operators."""
        n = self.r.randint(lo, hi)
        lab, src = [], []
        for k in range(n):
            if k:
                op = self.pick(BINARY) if self.r.random() < 0.6 else ""
                lab.append(op)
                src.append(op)
            a, s = self.factor(depth)
            lab.append(a)
            src.append(s)
        return join(lab), join(src)

    def exponent(self) -> str:
        """A superscript of several atoms, as exponentials and powers have them: i\\pi, -x^{2}, 2\\pi ik, n+1, -1/2."""
        r = self.r.random()
        v = self.pick("xtkn")
        if r < 0.3:
            return join([self.pick(["i", "-i", "2\\pi i", "-2\\pi i", "i\\omega", "-\\lambda", "-i\\omega"]),
                         self.pick(["\\pi", "\\theta", "\\phi", "t", "x", "kx", "\\omega t", "nx"])])
        if r < 0.5:
            return join(["-", v, "^{2}"]) if self.r.random() < 0.6 else join(["-", "\\frac{" + v + "^{2}}{2}"])
        if r < 0.7:
            return join([v, self.pick(["+1", "-1", "+k", "-k", "+2"])])
        if r < 0.85:
            return self.pick(["-1", "-2", "1/2", "-1/2", "n", "\\alpha", "-\\alpha t", "2n"])
        return join([self.pick(["2", "", "-"]), self.pick(["\\pi", "i", "\\alpha"]), self.pick("xtkn")])

    def applied(self, name: str | None = None, arg: str | None = None) -> str:
        """A function applied to a letter, a number or a short sum: f(x), F(b), g(t+1)."""
        name = name or self.pick(["f", "f", "g", "h", "F", "G", "u", "y", "\\phi", "\\psi"])
        arg = arg or self.pick([self.pick("xtsabnkz"), self.pick("xtsabnkz"), self.number(), join([self.pick("xtn"), self.pick(["+1", "-1", "+h"])])])
        return f"{name}({arg})"

    def vector(self) -> str:
        return self.pick(["\\mathbf{" + self.pick("EBDHJAFvurx") + "}", "\\vec{" + self.pick("EBFvur") + "}"])

    def textbook(self) -> tuple[str, str]:
        """Formulas shaped as textbooks and papers set them, which the grammar above draws too rarely: an exponential
        of a product, vector calculus, a definite integral evaluated, derivatives written out, function values. Letters,
        limits and operands are drawn, never a named formula's own."""
        r = self.r.random()
        if r < 0.2:  # exponentials and powers with several atoms up top
            base = self.pick(["e", "e", "e", "x", "a", "z", "\\mathrm{e}", "2", "10"])
            lhs = base + "^{" + self.exponent() + "}"
            if self.r.random() < 0.3:
                lhs = join([self.symbol()[0], lhs])
            parts = [lhs]
            for _ in range(self.r.randint(0, 2)):
                parts += [self.pick(["+", "-", "+"]), self.scripted(1)[0]]
            rhs = self.pick([self.number(), self.sequence(1, 1, 2)[0], join(["\\cos", self.pick(["\\theta", "x", "t"]), "+i", "\\sin", self.pick(["\\theta", "x", "t"])])])
            lab = join(parts + ["=", rhs])
            return lab, lab
        if r < 0.45:  # vector calculus
            op = self.pick(["\\nabla\\times", "\\nabla\\times", "\\nabla\\cdot", "\\nabla\\cdot", "\\nabla^{2}", "\\nabla"])
            lhs = join([op, self.vector() if not op.endswith("}") and op != "\\nabla" else self.pick(["u", "\\phi", "f", "\\psi", "V"])])
            v = self.vector()
            c = self.pick(["\\mu_{0}", "\\varepsilon_{0}", "\\mu_{0}\\varepsilon_{0}", "", "", "c^{2}", "\\sigma", "-"])
            rhs = self.pick([
                "0", "0",
                "\\frac{" + self.pick(["\\rho", "q", "\\sigma", "Q"]) + "}{" + self.pick(["\\varepsilon_{0}", "\\epsilon_{0}", "4\\pi", "\\kappa"]) + "}",
                join([self.pick(["-", ""]), partial(v, "t")]),
                join([c, self.vector(), "+", c.lstrip("-"), partial(v, "t")]),
                join([c, self.vector()]),
                join([self.pick(["-", ""]), "\\nabla", self.pick(["\\phi", "V", "p", "u"])]),
                self.sequence(1, 1, 2)[0],
            ])
            lab = join([lhs, "=", rhs])
            return lab, lab
        if r < 0.65:  # a definite integral, evaluated or equated
            v = self.pick("xtsuy")
            lo, hi = self.pick([("a", "b"), ("0", "1"), ("0", "\\infty"), ("-\\infty", "\\infty"), ("0", "T"), ("0", "x"), ("1", "n"), ("-1", "1"), ("0", "2\\pi")])
            f = self.pick(["f", "g", "h", "u", "p", "\\phi"])
            body = self.pick([f"{f}({v})", f"{f}({v})", f"{f}^{{\\prime}}({v})", self.sequence(1, 1, 2)[0], join([v, "^{" + self.pick("2n3") + "}"]), join(["e^{" + self.exponent() + "}"])])
            thin = self.pick(["", "\\,", "\\,"])  # typeset pages set a thin space before d; the label has none
            big = f.upper() if f.isalpha() else "\\Phi"
            rhs = self.pick([join([big, f"({hi})-", big, f"({lo})"]), self.sequence(1, 1, 2)[0], self.number(), join(["\\left[", big, f"({v})", "\\right]_{" + lo + "}^{" + hi + "}"])])
            lab = join(["\\int_{" + lo + "}^{" + hi + "}", body, "d" + v, "=", rhs])
            src = join(["\\int_{" + lo + "}^{" + hi + "}", body, thin + "d" + v, "=", rhs])
            if self.r.random() < 0.5:  # limits stacked above and below the sign, as display style sets them
                src = join(["\\overset{" + hi + "}{\\underset{" + lo + "}{\\int}}", body, thin + "d" + v, "=", rhs])
            return lab, src
        if r < 0.8:  # derivatives written out
            f, v = self.pick(["f", "y", "u", "F", "x", "\\phi"]), self.pick("xt")
            lhs = self.pick(["\\frac{d" + f + "}{d" + v + "}", "\\frac{d}{d" + v + "}" + self.applied(f if f.isalpha() else "f", v),
                             partial(f, v), partial(f, v, 2),
                             self.applied(f if f.isalpha() else "f", v).replace("(", "^{\\prime}(", 1)])
            rhs = self.pick([self.sequence(1, 1, 3)[0], self.applied(), join([self.pick(["-", "", "k", "\\lambda"]), self.applied()]),
                             join([self.pick(["c^{2}", "D", "\\alpha", "k"]), partial(f, self.pick("xyz"), 2)])])
            lab = join([lhs, "=", rhs])
            return lab, lab
        # named quantities set as equations: function values, differences, products of scripted symbols
        lhs = self.pick([self.applied(), self.scripted(1)[0], join([self.applied(), self.pick(["+", "-"]), self.applied()])])
        rhs = join([self.pick(["", "-", "2"]), self.applied(), self.pick(["-", "+", "\\cdot"]), self.applied()]) if self.r.random() < 0.5 else self.sequence(0, 1, 3)[0]
        lab = join([lhs, self.pick(["=", "=", "\\leq", "\\approx"]), rhs])
        return lab, lab

    def formula(self) -> tuple[str, str]:
        if self.r.random() < self.textbook_share:
            return self.textbook()
        r = self.r.random()
        if r < 0.12:  # a list of terms
            a = [self.scripted(1) for _ in range(self.r.randint(2, 4))]
            if self.r.random() < 0.4:
                a.insert(len(a) - 1, ("\\ldots", "\\ldots"))
            return join([x for p in a for x in (p[0], ",")][:-1]), join([x for p in a for x in (p[1], ",")][:-1])
        lab, src = self.sequence(0, 1, 2 if self.r.random() < 0.6 else 3)
        if r < 0.22:
            return lab, src
        for _ in range(1 if self.r.random() < 0.85 else 2):
            rel = self.pick(RELATIONS)
            if self.r.random() < 0.1:
                rel = rel + "-"
            b, sb = self.sequence(0, 1, 2 if self.r.random() < 0.7 else 3)
            lab, src = join([lab, rel, b]), join([src, rel, sb])
        return lab, src


def join(parts: list[str]) -> str:
    """Concatenate LaTeX pieces, with a space only where a control word would run into a letter."""
    out = ""
    for p in parts:
        if not p:
            continue
        if out and p[0].isalpha():
            i = len(out) - 1
            while i >= 0 and out[i].isalpha():
                i -= 1
            if i >= 0 and out[i] == "\\" and i < len(out) - 1:
                out += " "
        out += p
    return out


def partial(f: str, v: str, order: int = 1) -> str:
    """\\frac{\\partial f}{\\partial v}, spaced as the label spells it (a space only before a letter)."""
    d = "\\partial" + (f"^{{{order}}}" if order > 1 else "")
    return "\\frac{" + join([d, f]) + "}{" + join(["\\partial", v]) + (f"^{{{order}}}" if order > 1 else "") + "}"


def canonical_spaces(s: str) -> str:
    """Drop spaces a control word does not need: the label's spelling."""
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == " ":
            prev = "".join(out)
            j = len(prev) - 1
            while j >= 0 and prev[j].isalpha():
                j -= 1
            needs = j >= 0 and prev[j] == "\\" and j < len(prev) - 1 and i + 1 < len(s) and s[i + 1].isalpha()
            if needs:
                out.append(" ")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def render(src: str, rng: random.Random) -> Image.Image:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import mathtext
    matplotlib.rcParams["mathtext.fontset"] = rng.choice(FONTSETS)
    buf = io.BytesIO()
    mathtext.math_to_image("$" + src + "$", buf, dpi=rng.choice([110, 140, 170, 200, 240, 300]), format="png")
    buf.seek(0)
    im = Image.open(buf).convert("RGBA")
    bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
    return cut(np.asarray(Image.alpha_composite(bg, im).convert("L")), rng)


def cut(g: np.ndarray, rng: random.Random) -> Image.Image:
    """A grey picture's ink with margins as a page's formula crops have them (the layout's band, a few pixels of
    paper around the ink)."""
    ink = np.where(g < 200)
    if not len(ink[0]):
        raise ValueError("no ink")
    y0, y1, x0, x1 = ink[0].min(), ink[0].max() + 1, ink[1].min(), ink[1].max() + 1
    h = y1 - y0
    top, bottom = int(rng.uniform(0.02, 0.25) * h), int(rng.uniform(0.02, 0.25) * h)
    left, right = int(rng.uniform(0.05, 0.6) * h), int(rng.uniform(0.05, 0.6) * h)
    out = np.full((h + top + bottom, (x1 - x0) + left + right), 255, dtype=np.uint8)
    out[top: top + h, left: left + (x1 - x0)] = g[y0:y1, x0:x1]
    return Image.fromarray(out)


def build(out_dir: str, count: int, seed: int, exclude: set[str], max_chars: int = 96) -> None:
    rng = random.Random(seed)
    gen = Gen(rng)
    os.makedirs(out_dir, exist_ok=True)
    n = tried = 0
    seen: set[str] = set()
    with open(os.path.join(out_dir, "labels.tsv"), "w", encoding="utf-8") as tsv:
        while n < count:
            tried += 1
            lab, src = gen.formula()
            # (a label spelled other than canonically is the generator's bug: one answer per picture)
            if len(lab) > max_chars or lab in exclude or lab in seen or "\t" in lab or canonical_spaces(lab) != lab:
                continue
            try:
                img = render(src, rng)
            except Exception:  # mathtext refused the source: the generator's bug, not the reader's lesson
                continue
            if img.height < 8 or img.width < 8:
                continue
            seen.add(lab)
            name = f"{n:06d}.png"
            img.save(os.path.join(out_dir, name))
            tsv.write(f"{name}\t{lab}\tformula\n")
            n += 1
            if n % 2000 == 0:
                print(f"{n}/{count} formulas", file=sys.stderr, flush=True)
    print(f"{n} formulas ({tried} drawn) in {out_dir}", file=sys.stderr)


PAGE_TEXT = [
    "The flux through a closed surface follows from the field inside it, and the",
    "rate of change of the field is given by the relation below, where t is time:",
]
PAGE_FORMULAS = [
    (r"x^{2}+y^{2}=r^{2}", r"x^{2}+y^{2}=r^{2}"),
    (r"\nabla\times\mathbf{H}=\frac{\partial\mathbf{D}}{\partial t}", r"\nabla\times\mathbf{H}=\frac{\partial\mathbf{D}}{\partial t}"),
    (r"\int_{0}^{1}g(s)ds=G(1)-G(0)", r"\overset{1}{\underset{0}{\int}}g(s)ds=G(1)-G(0)"),
]


def formula_page(out_png: str) -> None:
    """A test page (test/fixtures/formula-page.png): text and three display formulas (scripts; a fraction; stacked
    limits) between its lines; its truth beside it as JSON (line boxes, text or LaTeX)."""
    from PIL import ImageDraw, ImageFont
    import json
    rng = random.Random(4)
    page = Image.new("L", (1400, 720), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 28)
    lines, y = [], 60
    def text(t):
        nonlocal y
        box = draw.textbbox((80, y), t, font=font)
        draw.text((80, y), t, font=font, fill=0)
        lines.append({"kind": "text", "text": t, "box": list(box)})
        y += 46
    def formula(label, src):
        nonlocal y
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import mathtext
        matplotlib.rcParams["mathtext.fontset"] = "cm"
        buf = io.BytesIO()
        mathtext.math_to_image("$" + src + "$", buf, dpi=240, format="png")
        buf.seek(0)
        im = Image.open(buf).convert("RGBA")
        g = Image.alpha_composite(Image.new("RGBA", im.size, (255, 255, 255, 255)), im).convert("L")
        y += 24
        x = (page.width - g.width) // 2
        page.paste(g, (x, y))
        lines.append({"kind": "formula", "latex": label, "box": [x, y, x + g.width, y + g.height]})
        y += g.height + 34
    text("A point on the circle of radius r about the origin satisfies")
    formula(*PAGE_FORMULAS[0])
    text(PAGE_TEXT[0])
    text(PAGE_TEXT[1])
    formula(*PAGE_FORMULAS[1])
    text("and over an interval the integral of a rate gives the change of its total:")
    formula(*PAGE_FORMULAS[2])
    text("Both hold for every field this chapter considers.")
    page = page.crop((0, 0, page.width, y + 40))
    page.save(out_png)
    with open(out_png.replace(".png", ".json"), "w") as f:
        json.dump({"lines": lines}, f, indent=1)


INLINE_LINES = [
    ("Suppose that ", "g'=ug", r"g^{\prime}=ug", " for some unit u of the ring."),
    ("The energy is ", "E=mc^{2}", r"E=mc^{2}", " in the units of this chapter."),
    ("It follows that ", r"\alpha\leq\beta", r"\alpha\leq\beta", " whenever both are defined."),
]


def inline_page(out_png: str) -> None:
    """A test page (test/fixtures/inline-formula-page.png): prose lines with a formula set in each (mathtext at the
    text's size, on its line), and a line of prose without one; its truth beside it as JSON."""
    from PIL import ImageDraw, ImageFont
    import json
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import mathtext
    matplotlib.rcParams["mathtext.fontset"] = "cm"
    page = Image.new("L", (1400, 60 + 56 * (len(INLINE_LINES) + 1) + 40), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 28)
    lines, y = [], 60
    for before, src, label, after in INLINE_LINES:
        buf = io.BytesIO()
        mathtext.math_to_image("$" + src + "$", buf, dpi=250, format="png")
        buf.seek(0)
        im = Image.open(buf).convert("RGBA")
        g = Image.alpha_composite(Image.new("RGBA", im.size, (255, 255, 255, 255)), im).convert("L")
        draw.text((80, y), before, font=font, fill=0)
        x = 80 + int(draw.textlength(before, font=font))
        top = draw.textbbox((80, y), before, font=font)
        # Centred on the text's ink, as a formula set in a line sits about its middle.
        page.paste(g, (x, (top[1] + top[3]) // 2 - g.height // 2))
        x += g.width + int(draw.textlength(" ", font=font))
        draw.text((x, y), after.lstrip(), font=font, fill=0)
        lines.append({"before": before.strip(), "latex": label, "after": after.strip()})
        y += 56
    plain = "A line of prose with no mathematics set in it at all."
    draw.text((80, y), plain, font=font, fill=0)
    lines.append({"text": plain})
    page.save(out_png)
    with open(out_png.replace(".png", ".json"), "w") as f:
        json.dump({"lines": lines}, f, indent=1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exclude", help="a labels.tsv whose formulas this set must not hold (the held-out set's)")
    ap.add_argument("--print", type=int, default=0, help="print this many generated labels and stop")
    ap.add_argument("--page", action="store_true", help="write the formula test page to --out (a .png path) and stop")
    ap.add_argument("--inline-page", action="store_true", help="write the inline formula test page to --out and stop")
    args = ap.parse_args()
    if args.inline_page:
        inline_page(args.out)
        sys.exit(0)
    if args.page:
        formula_page(args.out)
        sys.exit(0)
    if args.print:
        g = Gen(random.Random(args.seed))
        for _ in range(args.print):
            print(g.formula()[0])
        sys.exit(0)
    excl: set[str] = set()
    if args.exclude:
        with open(args.exclude, encoding="utf-8") as f:
            excl = {line.split("\t")[1] for line in f if "\t" in line}
    build(args.out, args.count, args.seed, excl)
