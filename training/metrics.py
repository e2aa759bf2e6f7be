"""Character error rate, scored the way the project's eval scores it: NFKC, whitespace folded."""
import re
import unicodedata


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip()


def edit_distance(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def cer(hyps, refs) -> float:
    """Total edits over total reference characters (a corpus CER, not a mean of per-line rates)."""
    e = n = 0
    for h, r in zip(hyps, refs):
        h, r = norm(h), norm(r)
        e += edit_distance(h, r)
        n += max(1, len(r))
    return e / max(1, n)
