#!/usr/bin/env bash
# A public set of phone-photographed pages with their text, for `npm run eval -- --suite pages --page-dir DIR`:
# the seven photos of two printed school worksheets (French) and their transcriptions in Data For Good France's
# batch9_dyslexia repository (MIT, https://github.com/dataforgoodfr/batch9_dyslexia, Exemples/), laid out as a page
# folder (manifest.jsonl). Usage: bench/photographed-set.sh CHECKOUT_OF_THAT_REPO OUT_DIR
set -euo pipefail
src=${1:?a checkout of dataforgoodfr/batch9_dyslexia}
out=${2:?the folder to write}
mkdir -p "$out"
: >"$out/manifest.jsonl"
cp "$src/Exemples/truth/hist_geo.txt" "$src/Exemples/truth/svt.txt" "$out/"
for dir in Histoire_Geo:hist_geo SVT:svt; do
  for photo in "$src/Exemples/${dir%%:*}"/IMG_*.jpg; do
    name="${dir%%:*}-$(basename "$photo")"
    cp "$photo" "$out/$name"
    printf '{"image": "%s", "gt": "%s.txt"}\n' "$name" "${dir##*:}" >>"$out/manifest.jsonl"
  done
done
echo "$(wc -l <"$out/manifest.jsonl") photos in $out"
