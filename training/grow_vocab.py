"""Grow a checkpoint's vocabulary rows to charset.py's, so a trained model learns new letters without starting over.

Characters are only ever appended to the vocabulary, so old ids keep their rows. A new letter starts from the
rows of the Latin letter it looks like or is built on (Cyrillic а and Greek α from a, ő from o, ł from l), a
little below it, so the model reads exactly as before on its first step and only has to learn the difference.
"""
import unicodedata

import torch

import charset

# Letters that look like a Latin one but do not decompose to it.
_LOOKALIKE = dict(p.split(":") for p in (
    "А:A В:B Е:E К:K М:M Н:H О:O Р:P С:C Т:T Х:X У:Y а:a е:e о:o р:p с:c у:y х:x і:i ј:j ѕ:s І:I Ј:J Ѕ:S "
    "Α:A Β:B Ε:E Ζ:Z Η:H Ι:I Κ:K Μ:M Ν:N Ο:O Ρ:P Τ:T Υ:Y Χ:X ο:o ι:i κ:k ν:v υ:u ρ:p "
    "μ:µ ł:l Ł:L đ:d Đ:D ħ:h Ħ:H ı:i ĸ:k ŋ:n Ŋ:N ŀ:l Ŀ:L ſ:f ŧ:t Ŧ:T ŉ:n ĳ:i Ĳ:I"
).split())


def seed_char(ch: str, old_size: int) -> str | None:
    """The letter among the checkpoint's first `old_size` ids that a new one starts from, or None."""
    if ch in _LOOKALIKE:
        ch = _LOOKALIKE[ch]
    base = unicodedata.normalize("NFD", ch)[0]
    base = _LOOKALIKE.get(base, base)
    return base if base in charset.CHAR_TO_ID and charset.CHAR_TO_ID[base] < old_size else None


def grow(state: dict[str, torch.Tensor], new_size: int, head_scale: float = 0.9, ctc_bias_drop: float = 1.5):
    """Pad tok/lm_head/ctc_head rows from the checkpoint's vocabulary size to new_size, in place."""
    old = state["tok.weight"].shape[0]
    if old == new_size:
        return state
    if old > new_size:
        raise ValueError(f"checkpoint has {old} vocabulary rows, charset.py only {new_size}")
    seeds = [seed_char(charset.VOCAB[i], old) for i in range(old, new_size)]
    src = [charset.CHAR_TO_ID[s] if s else None for s in seeds]
    g = torch.Generator().manual_seed(0)

    def rows(t: torch.Tensor, scale: float, noise: float) -> torch.Tensor:
        out = torch.randn((new_size - old, *t.shape[1:]), generator=g) * noise
        for j, s in enumerate(src):
            if s is not None:
                out[j] += t[s] * scale
        return torch.cat([t, out.to(t.dtype)])

    state["tok.weight"] = rows(state["tok.weight"], 1.0, 0.02)
    state["lm_head.weight"] = rows(state["lm_head.weight"], head_scale, 0.01)
    state["ctc_head.weight"] = rows(state["ctc_head.weight"], head_scale, 0.01)
    b = state["ctc_head.bias"]
    nb = torch.full((new_size - old,), float(b.min()))
    for j, s in enumerate(src):
        if s is not None:
            nb[j] = b[s] - ctc_bias_drop
    state["ctc_head.bias"] = torch.cat([b, nb])
    return state


if __name__ == "__main__":
    print(" ".join(f"{c}<{seed_char(c, 222) or '-'}" for c in charset.VOCAB[222:]))
