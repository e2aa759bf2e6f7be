"""One spelling for a formula's LaTeX, the formula reader's label: what changes no glyph is taken out or spelled one way.

- spacing commands (`\\,` `\\quad` `~` ...), `\\displaystyle`, `\\limits`, `\\nonumber`, `\\label{..}` are dropped;
- true aliases are spelled one way (`\\le` is `\\leq`, `\\rightarrow` is `\\to`, `\\lbrace` is `\\{`);
- old font switches become commands (`{\\cal L}` is `\\mathcal{L}`, `{\\rm e}` is `\\mathrm{e}`);
- `{a \\over b}` is `\\frac{a}{b}` and `{n \\choose k}` is `\\binom{n}{k}`;
- every argument of a script or a command is braced (`x^2` is `x^{2}`, `\\frac12` is `\\frac{1}{2}`);
- braces around what is no argument are dropped where their content is plain (`{\\bar\\psi}` is `\\bar{\\psi}`);
- no spaces but the one a control word needs before a letter; text-mode arguments (`\\text{..}`) kept as written.

Whether a rewrite keeps the picture is not assumed: tex_formulas.py typesets the source and its canonical spelling
and keeps the formula only where the two pictures agree. `canonical` returns None for what it cannot spell (an
unbalanced group, a macro of a paper's own).
"""
import re

SPACING = {"\\,", "\\;", "\\:", "\\!", "\\ ", "\\quad", "\\qquad", "~", "\\displaystyle", "\\limits", "\\nonumber",
           "\\notag", "\\nolimits", "\\relax", "\\hfill", "\\enspace", "\\thinspace", "\\negthinspace", "\\>"}
# Commands dropped with their one argument.
DROP_WITH_ARG = {"\\label", "\\hspace", "\\vspace", "\\hspace*", "\\tag"}
ALIASES = {"\\le": "\\leq", "\\ge": "\\geq", "\\ne": "\\neq", "\\rightarrow": "\\to", "\\gets": "\\leftarrow",
           "\\lbrace": "\\{", "\\rbrace": "\\}", "\\vert": "|", "\\lvert": "|", "\\rvert": "|", "\\Vert": "\\|",
           "\\lVert": "\\|", "\\rVert": "\\|", "\\textrm": "\\text", "\\mbox": "\\text", "\\hbox": "\\text",
           "\\sp": "^", "\\sb": "_", "\\lnot": "\\neg", "\\land": "\\wedge", "\\lor": "\\vee", "\\iff": "\\Longleftrightarrow"}
SWITCHES = {"\\cal": "\\mathcal", "\\rm": "\\mathrm", "\\bf": "\\mathbf", "\\it": "\\mathit", "\\sf": "\\mathsf",
            "\\tt": "\\mathtt", "\\mit": "\\mathit", "\\Bbb": "\\mathbb", "\\frak": "\\mathfrak", "\\bm": None}
INFIX = {"\\over": "\\frac", "\\choose": "\\binom"}
TEXT_ARG = {"\\text", "\\textit", "\\textbf", "\\textsf", "\\texttt", "\\emph"}
ONE = ("hat widehat tilde widetilde bar vec dot ddot dddot acute grave check breve mathring overline underline "
       "overrightarrow overleftarrow overleftrightarrow underrightarrow underleftarrow overbrace underbrace "
       "mathrm mathbf mathit mathcal mathbb mathfrak mathsf mathtt mathscr mathbfit boldsymbol bm pmb operatorname* "
       "text textit textbf textsf texttt emph operatorname sqrt boxed cancel bcancel xcancel phantom hphantom "
       "vphantom substack pmod bmod_ begin end mathop mathbin mathrel mathord mathopen mathclose mathpunct "
       "xrightarrow xleftarrow textstyle_ scriptstyle_ big_ not_ smash").split()
TWO = "frac dfrac tfrac cfrac binom dbinom tbinom overset underset stackrel".split()
ARITY = {**{"\\" + c: 1 for c in ONE if not c.endswith("_")}, **{"\\" + c: 2 for c in TWO}}
# `\operatorname{ln}` is `\ln` (im2latex's normaliser spells every named operator the long way); `*`: limits.
OPERATORS = {"\\operatorname": set("arccos arcsin arctan arg cos cosh cot coth csc deg dim exp hom ker lg ln log sec "
                                    "sin sinh tan tanh".split()),
             "\\operatorname*": set("det gcd inf lim liminf limsup max min Pr sup".split())}
# Environments whose first argument is a column specification.
SPEC_ENVS = {"array", "tabular", "alignedat", "alignat"}
# Commands whose optional [..] argument is part of them.
OPTIONAL = {"\\sqrt", "\\xrightarrow", "\\xleftarrow"}
TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|\s+|.", re.S)


class Unspellable(ValueError):
    pass


def tokens(s: str) -> list[str]:
    """Control words, escaped characters, single characters; whitespace kept as " " (text arguments need it)."""
    return [" " if t.isspace() else t for t in TOKEN.findall(s)]


def parse(toks: list[str], i: int = 0, closer: str | None = None) -> tuple[list, int]:
    """A token list as a tree: a group is a list; returns (items, index after the group)."""
    out: list = []
    while i < len(toks):
        t = toks[i]
        if t == "{":
            sub, i = parse(toks, i + 1, "}")
            out.append(sub)
            continue
        if t == "}":
            if closer != "}":
                raise Unspellable("unbalanced }")
            return out, i + 1
        out.append(t)
        i += 1
    if closer:
        raise Unspellable("unbalanced {")
    return out, i


def text_of(items: list) -> str:
    """A text-mode argument as written (inner runs of spaces as one)."""
    s = "".join("{" + text_of(x) + "}" if isinstance(x, list) else x for x in items)
    return re.sub(r" +", " ", s)


def split_infix(items: list) -> list:
    """`a \\over b` within a group as `\\frac{a}{b}` (the group's whole content)."""
    for k, x in enumerate(items):
        if isinstance(x, str) and x in INFIX:
            return [INFIX[x], items[:k], items[k + 1:]]
    return items


def apply_switches(items: list) -> list:
    """`\\cal L M` (to the group's end) as `\\mathcal{LM}`."""
    for k, x in enumerate(items):
        if isinstance(x, str) and x in SWITCHES:
            if SWITCHES[x] is None:
                raise Unspellable(x)
            return items[:k] + [SWITCHES[x], apply_switches(items[k + 1:])]
    return items


def strip_spaces(items: list) -> list:
    return [x for x in items if not (isinstance(x, str) and x == " ")]


def argument(items: list, k: int) -> tuple[list, int]:
    """The argument at items[k] (a group, a command with its arguments, or one token) and the index after it."""
    while k < len(items) and items[k] == " ":
        k += 1
    if k >= len(items):
        raise Unspellable("missing argument")
    x = items[k]
    if isinstance(x, list):
        return x, k + 1
    if x in SWITCHES or x in DROP_WITH_ARG:
        raise Unspellable(f"argument {x}")
    end = k + 1
    for _ in range(ARITY.get(ALIASES.get(x, x), 0)):
        _, end = argument(items, end)
    return items[k:end], end


def atoms(items: list) -> int:
    """How many atoms a group's items make (a command with its arguments is one)."""
    n = k = 0
    items = [x for x in items if not (isinstance(x, str) and (x == " " or x in SPACING))]
    while k < len(items):
        _, k = argument(items, k)
        n += 1
    return n


def spell(items: list) -> list[str]:
    """Canonical tokens of a group's items (braces as "{" and "}")."""
    items = apply_switches(split_infix(items))
    out: list[str] = []
    k = 0
    while k < len(items):
        x = items[k]
        k += 1
        if isinstance(x, list):
            rest = strip_spaces(items[k:])
            out += spell_group(x, rest[0] if rest else None)
            continue
        if x == " ":
            continue
        if x in SPACING:
            continue
        if x in DROP_WITH_ARG:
            _, k = argument(items, k)
            continue
        x = ALIASES.get(x, x)
        if x in OPERATORS:
            arg, after = argument(items, k)
            name = text_of(arg).replace(" ", "")
            if name in OPERATORS[x]:
                out.append("\\" + name)
                k = after
                continue
        out.append(x)
        if x in ("^", "_"):
            arg, k = argument(items, k)
            out += ["{", *spell(arg), "}"]
        elif x in OPTIONAL and k < len(items) and items[k] == "[":
            j = items.index("]", k)
            out += ["[", *spell(items[k + 1:j]), "]"]
            k = j + 1
        if x in ("\\begin", "\\end"):
            arg, k = argument(items, k)
            env = text_of(arg).strip()
            out += ["{", env, "}"]
            if x == "\\begin" and env.rstrip("*") in SPEC_ENVS:
                arg, k = argument(items, k)
                out += ["{", text_of(arg).replace(" ", ""), "}"]
        elif x in ARITY:
            for _ in range(ARITY[x]):
                arg, k = argument(items, k)
                if x in TEXT_ARG:
                    out += ["{", text_of(arg), "}"]
                else:
                    out += ["{", *spell(arg), "}"]
    return out


def spell_group(group: list, after: object) -> list[str]:
    """A brace group that is no command's argument, its braces dropped but where they show: nothing inside (`{}`
    before a script), a script on the whole group, a lone operator made ordinary (`{=}`)."""
    inner = spell(group)
    scripted = after in ("^", "_") and atoms(apply_switches(split_infix(group))) > 1
    lone_operator = len(inner) == 1 and inner[0] in list("=<>+-,;:*/|") + ["\\\\"]
    if not inner or scripted or lone_operator:
        return ["{", *inner, "}"]
    return inner


def join(toks: list[str]) -> str:
    """Tokens as one string, with a space only where a control word would run into a letter."""
    out = ""
    for t in toks:
        if out and t and (t[0].isalpha() or t[0] == "*") and re.search(r"\\[A-Za-z]+$", out):
            out += " "
        out += t
    return out


def canonical(src: str) -> str | None:
    """The reader's label for `src`, or None where it cannot be spelled (see the module's comment)."""
    try:
        tree, _ = parse(tokens(src.strip()))
        s = join(spell(tree))
    except (Unspellable, ValueError):
        return None
    s = s.strip()
    while s.endswith("\\\\"):
        s = s[:-2].strip()
    return s or None
