"""The model's vocabulary: special ids first, then one id per character.

The engine reads the same table from config.json, so this file is the single source of truth.
"""

PAD, BOS, EOS, MASK, UNK = 0, 1, 2, 3, 4  # PAD doubles as the CTC blank
SPECIALS = ["<pad>", "<bos>", "<eos>", "<mask>", "<unk>"]

_ascii = [chr(c) for c in range(32, 127)]
# Latin-1 supplement without the no-break space and the soft hyphen (invisible when printed).
_latin1 = [chr(c) for c in range(0xA1, 0x100) if c != 0xAD]
_extra = list("ŒœŠšŽžŸƒ‘’‚“”„–—…•†‡‰‹›€™−′″")

CHARS = _ascii + _latin1 + _extra
VOCAB = SPECIALS + CHARS
CHAR_TO_ID = {c: i for i, c in enumerate(VOCAB) if i >= len(SPECIALS)}

assert len(set(CHARS)) == len(CHARS)


def encode(text: str) -> list[int]:
    return [CHAR_TO_ID.get(c, UNK) for c in text]


def decode(ids) -> str:
    out = []
    for i in ids:
        i = int(i)
        if i == EOS:
            break
        if i >= len(SPECIALS):
            out.append(VOCAB[i])
    return "".join(out)
