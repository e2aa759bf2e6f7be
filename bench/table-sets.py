"""Public table images with HTML truth, as folders `npm run eval -- --suite tables --table-dir DIR` scores: images and
a manifest.jsonl of `{ "image", "html", "source" }` rows. Built from two repositories' git folders (the tool
library's `fetch`, or `git clone --bare`), nothing committed here:

- PubTabNet (ibm-aur-nlp/PubTabNet, annotations CDLA-Permissive-1.0, images from PMC's open-access papers): the 20
  validation tables of `ICDAR_SLR_competition/val_mini.zip` with `src/sample_gt.json` (metric.py's demonstration
  truth) and the 20 tables of `examples/` with `PubTabNet_Examples.jsonl`;
- ICDAR-2013's table competition (as tabulapdf/tabula-java's tests hold it: the PDFs with their `-str.xml` cells
  and `-reg.xml` regions): each table region rendered by poppler at 150 dpi with 4 pt of paper round it.

  /usr/bin/python3 bench/table-sets.py --pubtabnet /work/.mirror/ibm-aur-nlp+PubTabNet/repo \\
      --icdar /work/.mirror/tabulapdf+tabula-java/repo --out bench/tables
"""
import argparse
import html
import io
import json
import os
import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zipfile

ICDAR = "src/test/resources/technology/tabula/icdar2013-dataset"
DPI, MARGIN = 150, 4


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


def pubtabnet_html(ann: dict) -> str:
    """PubTabNet's structure tokens with each cell's tokens put in (its examples/utils.py does the same)."""
    cells = iter(ann["cells"])
    out = []
    for tok in ann["structure"]["tokens"]:
        out.append(tok)
        if tok in ("<td>", ">"):
            out.append("".join(next(cells)["tokens"]))
    return "<table>" + "".join(out) + "</table>"


def pubtabnet(repo: str, out: str) -> list[dict]:
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    rows = []
    truth = json.loads(git(repo, "show", "HEAD:src/sample_gt.json"))
    with zipfile.ZipFile(io.BytesIO(git(repo, "show", "HEAD:ICDAR_SLR_competition/val_mini.zip"))) as z:
        for name in sorted(z.namelist()):
            base = os.path.basename(name)
            if base in truth:
                open(os.path.join(out, "images", base), "wb").write(z.read(name))
                table = re.search(r"<table>.*</table>", truth[base]["html"], re.S).group(0)
                rows.append({"image": f"images/{base}", "html": table,
                             "source": f"ibm-aur-nlp/PubTabNet@{head}:ICDAR_SLR_competition/val_mini.zip ({name})"})
    for line in git(repo, "show", "HEAD:examples/PubTabNet_Examples.jsonl").decode().splitlines():
        ann = json.loads(line)
        name = ann["filename"]
        open(os.path.join(out, "images", name), "wb").write(git(repo, "show", f"HEAD:examples/{name}"))
        rows.append({"image": f"images/{name}", "html": pubtabnet_html(ann["html"]),
                     "source": f"ibm-aur-nlp/PubTabNet@{head}:examples/{name}"})
    return rows


def grid_html(cells: list[tuple[int, int, int, int, str]]) -> str:
    """ICDAR-2013's cells (start row, start column, end row, end column, text) as an HTML table."""
    rows, cols = max(c[2] for c in cells) + 1, max(c[3] for c in cells) + 1
    at = {(c[0], c[1]): c for c in cells}
    covered = {(r, k) for c in cells for r in range(c[0], c[2] + 1) for k in range(c[1], c[3] + 1)}
    out = ["<table>"]
    for r in range(rows):
        out.append("<tr>")
        for k in range(cols):
            c = at.get((r, k))
            if c is None:
                if (r, k) not in covered:
                    out.append("<td></td>")
                continue
            span = (f' rowspan="{c[2] - c[0] + 1}"' if c[2] > c[0] else "") + (
                f' colspan="{c[3] - c[1] + 1}"' if c[3] > c[1] else "")
            out.append(f"<td{span}>{html.escape(' '.join(c[4].split()), quote=False)}</td>")
        out.append("</tr>")
    return "".join(out) + "</table>"


def crop_box(pdf: str, page: int) -> tuple[list[float], int]:
    info = subprocess.run(["pdfinfo", "-f", str(page), "-l", str(page), "-box", pdf], capture_output=True,
                          text=True).stdout
    box = re.search(rf"Page\s+{page} CropBox:\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)", info)
    rot = re.search(rf"Page\s+{page} rot:\s+(\d+)", info)
    return [float(x) for x in box.groups()], int(rot.group(1)) if rot else 0


def number(s: str) -> float:
    return float(re.sub(r"[^0-9.\-]", "", s))


def icdar(repo: str, out: str) -> list[dict]:
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    names = git(repo, "ls-tree", "-r", "--name-only", "HEAD", ICDAR).decode().split()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for strf in sorted(n for n in names if n.endswith("-str.xml")):
            base = strf[: -len("-str.xml")]
            if f"{base}.pdf" not in names:  # an alternative answer (eu-009b) without a PDF of its own
                continue
            pdf = os.path.join(tmp, "page.pdf")
            open(pdf, "wb").write(git(repo, "show", f"HEAD:{base}.pdf"))
            regions = {(t.get("id"), r.get("id")): r for t in ET.fromstring(git(repo, "show", f"HEAD:{base}-reg.xml"))
                       .iter("table") for r in t.iter("region")}
            for t in ET.fromstring(git(repo, "show", f"HEAD:{strf}")).iter("table"):
                for r in t.findall("region"):
                    cells = [(int(c.get("start-row")), int(c.get("start-col")),
                              int(c.get("end-row", c.get("start-row"))), int(c.get("end-col", c.get("start-col"))),
                              (c.findtext("content") or "").strip()) for c in r.findall("cell")]
                    if not cells:
                        continue
                    r0, c0 = min(c[0] for c in cells), min(c[1] for c in cells)
                    cells = [(a - r0, b - c0, e - r0, f - c0, s) for a, b, e, f, s in cells]
                    page = int(r.get("page"))
                    reg = regions.get((t.get("id"), r.get("id")))
                    # The region's box where -reg.xml gives it on this page, else the cells' boxes together.
                    own = reg is not None and int(reg.get("page")) == page
                    boxes = [[number(b.get(k)) for k in ("x1", "y1", "x2", "y2")]
                             for b in (reg if own else r).iter("bounding-box")]
                    x1, y1 = min(b[0] for b in boxes), min(b[1] for b in boxes)
                    x2, y2 = max(b[2] for b in boxes), max(b[3] for b in boxes)
                    (cx1, cy1, cx2, cy2), rot = crop_box(pdf, page)
                    if rot in (90, 270):  # the region is in the turned page's space
                        cx1, cy1, cx2, cy2 = cy1, cx1, cy2, cx2
                    s = DPI / 72
                    x, y = int((x1 - MARGIN - cx1) * s), int((cy2 - (y2 + MARGIN)) * s)
                    w, h = int((x2 - x1 + 2 * MARGIN) * s), int((y2 - y1 + 2 * MARGIN) * s)
                    name = f"{os.path.basename(base)}_t{t.get('id')}_r{r.get('id')}"
                    subprocess.run(["pdftoppm", "-r", str(DPI), "-f", str(page), "-l", str(page), "-x", str(max(x, 0)),
                                    "-y", str(max(y, 0)), "-W", str(w), "-H", str(h), "-png", "-singlefile", pdf,
                                    os.path.join(out, "images", name)], check=True)
                    rows.append({"image": f"images/{name}.png", "html": grid_html(cells),
                                 "source": f"tabulapdf/tabula-java@{head}:{base}.pdf page {page}"})
    return rows


def write(out: str, rows: list[dict]) -> None:
    with open(os.path.join(out, "manifest.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} tables in {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pubtabnet", help="ibm-aur-nlp/PubTabNet's git folder")
    ap.add_argument("--icdar", help="tabulapdf/tabula-java's git folder (ICDAR-2013's table competition)")
    ap.add_argument("--out", required=True, help="a folder per set is made in it: pubtabnet/, icdar2013/")
    args = ap.parse_args()
    for name, repo, build in (("pubtabnet", args.pubtabnet, pubtabnet), ("icdar2013", args.icdar, icdar)):
        if repo:
            out = os.path.join(args.out, name)
            os.makedirs(os.path.join(out, "images"), exist_ok=True)
            write(out, build(repo, out))


if __name__ == "__main__":
    main()
