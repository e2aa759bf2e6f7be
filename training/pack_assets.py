"""Pack the fonts and text corpora the generator uses into one folder, for a machine without Debian's packages
(the GPU machine gets it through `carry`): up to four faces per family, word lists cut to 60k words each.

  /usr/bin/python3 training/pack_assets.py --out training/assets      # then SPECULA_ASSETS=training/assets
"""
import argparse
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render import FontBank  # noqa: E402
from textgen import TextSource  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--words", type=int, default=60000)
    args = ap.parse_args()
    if os.environ.get("SPECULA_ASSETS"):
        sys.exit("unset SPECULA_ASSETS: packing reads the system's fonts and corpora")
    os.makedirs(os.path.join(args.out, "fonts"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "dict"), exist_ok=True)
    bank = FontBank()
    n = 0
    for fam in bank.families.values():
        kept = {}
        for path, _have, bold, italic in fam:
            kept.setdefault((bold, italic), path)
        for path in kept.values():
            shutil.copy(path, os.path.join(args.out, "fonts", os.path.basename(path)))
            n += 1
    src = TextSource(0)
    rng = random.Random(0)
    with open(os.path.join(args.out, "prose.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(src.prose))
    with open(os.path.join(args.out, "code.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(src.code))
    for i, words in enumerate(src.words):
        pick = words if len(words) <= args.words else rng.sample(words, args.words)
        with open(os.path.join(args.out, "dict", f"{i}.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(pick))
    size = sum(os.path.getsize(os.path.join(d, x)) for d, _, xs in os.walk(args.out) for x in xs)
    print(f"{args.out}: {n} font files, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
