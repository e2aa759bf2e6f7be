#!/usr/bin/env bash
# The working tree a lent GPU machine is sent (the device tool takes at most 64 MiB of tracked and untracked files,
# carried folders included) holds all three bundles and the checkpoints they came from, about 95 MiB. This leaves
# out, through git's sparse checkout, what a kind of run does not need, and puts it back afterwards: nothing is
# moved by hand, and `git status` stays clean throughout.
#   bash infra/device-tree.sh slim bench      the GPU bench (bench/gpu.sh): the line bundle, no checkpoints
#   bash infra/device-tree.sh slim training   a training run (training/gpu.sh): the line checkpoint, no bundles
#   bash infra/device-tree.sh size [DIR...]   MiB that would travel, with the folders a run carries (e.g. .gpu)
#   bash infra/device-tree.sh restore         every file back
set -euo pipefail
cd "$(dirname "$0")/.."

profile() {
  case "$1" in
    bench) printf '%s\n' '/*' '!/training/checkpoints/' '!/models/specula-region-base/' '!/models/specula-formula-base/' ;;
    training) printf '%s\n' '/*' '!/models/' '!/training/checkpoints/*' '/training/checkpoints/specula-line-base.pt' ;;
    *) echo "device-tree.sh: no profile \"$1\" (bench or training)" >&2; exit 2 ;;
  esac
}

# Bytes of the files present that git tracks or would track, and of the carried folders.
size() {
  local bytes
  bytes=$({ git ls-files -z --cached --others --exclude-standard | xargs -0 -r stat -c %s -- 2>/dev/null || true
    for d in "$@"; do find "$d" -type f -printf '%s\n'; done; } | awk '{ s += $1 } END { print s + 0 }')
  awk -v b="$bytes" 'BEGIN { printf "%.1f MiB would travel (limit 64)\n", b / 1048576 }'
}

case "${1:-}" in
  slim)
    git sparse-checkout init --no-cone >/dev/null 2>&1 || true
    profile "${2:-}" | git sparse-checkout set --no-cone --stdin
    size ;;
  restore) git sparse-checkout disable ;;
  size) shift; size "$@" ;;
  *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
