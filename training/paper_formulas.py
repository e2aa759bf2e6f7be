"""Display formulas from papers' LaTeX sources, one a line, for tex_formulas.py: the bodies of `equation`, `align`,
`gather`, `multline`, `eqnarray`, `\\[ \\]` and `$$ $$`, comments, labels and `\\nonumber` taken out, each once.
Single-line bodies only by default (no `&`, no `\\\\`): the formula reader reads a band 32 pixels high.

  # the sources: a fetched repository's git folder (its .tex files read with git, no work tree needed)
  /usr/bin/python3 training/paper_formulas.py --git /work/.mirror/seba2390+OCR-Picture2Latex/repo \\
      --under papers/ --out training/runs/corpora/arxiv-display.txt
"""
import argparse
import re
import subprocess
import sys

ENVS = "equation|align|gather|multline|eqnarray|flalign|displaymath"
DISPLAY = re.compile(r"\\begin\{(" + ENVS + r")(\*?)\}(.*?)\\end\{\1\2\}|\\\[(.*?)\\\]|\$\$(.*?)\$\$", re.S)


def tex_files(git_dir: str, under: str):
    """(path, text) of the repository's .tex files under a folder, read from its objects."""
    tree = subprocess.run(["git", "ls-tree", "-r", "HEAD", "--", under], cwd=git_dir, capture_output=True,
                          text=True, check=True).stdout.splitlines()
    blobs = [(line.split()[2], line.split("\t", 1)[1]) for line in tree if line.endswith(".tex")]
    cat = subprocess.Popen(["git", "cat-file", "--batch"], cwd=git_dir, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    for sha, path in blobs:
        cat.stdin.write(f"{sha}\n".encode())
        cat.stdin.flush()
        head = cat.stdout.readline().split()
        if len(head) < 3 or head[1] != b"blob":  # absent from the snapshot
            continue
        body = cat.stdout.read(int(head[2]))
        cat.stdout.read(1)
        yield path, body.decode("utf-8", "replace")
    cat.stdin.close()


def bodies(text: str, multiline: bool):
    text = re.sub(r"(?<!\\)%[^\n]*", "", text)
    for m in DISPLAY.finditer(text):
        body = next(g for g in (m.group(3), m.group(4), m.group(5)) if g is not None)
        body = re.sub(r"\\label\{[^}]*\}|\\(nonumber|notag)\b", "", body)
        body = " ".join(body.split())
        if 3 <= len(body) <= 400 and (multiline or ("&" not in body and "\\\\" not in body)):
            yield body


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git", required=True, help="a git folder (fetch's mirror) holding the papers' sources")
    ap.add_argument("--under", default=".", help="the folder within it")
    ap.add_argument("--out", required=True)
    ap.add_argument("--multiline", action="store_true", help="keep aligned and multi-row bodies too")
    args = ap.parse_args()
    seen: set[str] = set()
    files = 0
    with open(args.out, "w", encoding="utf-8") as out:
        for _, text in tex_files(args.git, args.under):
            files += 1
            for body in bodies(text, args.multiline):
                if body not in seen:
                    seen.add(body)
                    out.write(body + "\n")
    print(f"{len(seen)} formulas from {files} .tex files in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
