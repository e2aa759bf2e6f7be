"""The model's vocabulary: special ids first, then one id per character.

The engine reads the same table from config.json, so this file is the single source of truth.
"""

PAD, BOS, EOS, MASK, UNK = 0, 1, 2, 3, 4  # PAD doubles as the CTC blank
SPECIALS = ["<pad>", "<bos>", "<eos>", "<mask>", "<unk>"]

_ascii = [chr(c) for c in range(32, 127)]
# Latin-1 supplement without the no-break space and the soft hyphen (invisible when printed).
_latin1 = [chr(c) for c in range(0xA1, 0x100) if c != 0xAD]
_extra = list("ŒœŠšŽžŸƒ‘’‚“”„–—…•†‡‰‹›€™−′″")

# Appended after the first 222 characters, so that a checkpoint from before them keeps its ids (train.py --init
# grows its vocabulary rows): Latin Extended-A whole, the Romanian comma-below letters, Greek's letters with their
# tonos and dialytika, Cyrillic's basic block (Russian, Ukrainian, Belarusian, Bulgarian, Serbian, Macedonian) and ґ.
_BASE = _ascii + _latin1 + _extra
_latin_ext = [chr(c) for c in range(0x100, 0x180) if chr(c) not in _BASE] + list("ȘșȚț")
_greek = [chr(c) for c in range(0x386, 0x3CF) if c not in (0x387, 0x38B, 0x38D, 0x3A2)]
_cyrillic = [chr(c) for c in range(0x400, 0x460)] + list("Ґґ№")
EUROPEAN = _latin_ext + _greek + _cyrillic

CHARS = _BASE + EUROPEAN
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
