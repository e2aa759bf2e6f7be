#!/usr/bin/env bash
# Ship a distilled vision pass (distill_vision.py) in the line bundle: stop the run (it writes weights.pt on SIGTERM),
# swap the student's vision graph and golden in (swap_vision.py: the decoder and the heads stay the teacher's), quantise the
# int8 vision graph again, check the bundle, fit the script gate again (it reads the vision pass), and score the
# real line sets into config.json. The weights are kept as training/checkpoints/specula-line-base-vision.pt.
#
#   bash training/finish_vision.sh [RUN] [BUNDLE]      (defaults: training/runs/stem, models/specula-line-base)
#
# A BUNDLE other than the shipped one (a copy of it) measures a student before it ships: `npm run eval -- --suite lines
# --model BUNDLE`.
#
# Needs `npm run build` first and the evaluation folder for the last step.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${1:-training/runs/stem}
PY=/usr/bin/python3
BUNDLE=${2:-models/specula-line-base}
export OMP_WAIT_POLICY=passive

if [[ -f "$RUN/pid" ]] && kill -0 "$(cat "$RUN/pid")" 2>/dev/null; then
  pid=$(cat "$RUN/pid")
  kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 2; done
fi

$PY training/swap_vision.py --ckpt "$RUN/weights.pt" --teacher training/checkpoints/specula-line-base.pt --bundle $BUNDLE
$PY training/quantize.py --bundle $BUNDLE --ckpt "$RUN/weights.pt" --out /tmp/specula-int8 --install
node dist/src/cli/main.js check-bundle $BUNDLE

# The gate's lines do not depend on the model: made once per machine.
[[ -d /tmp/sl-train ]] || $PY training/script_lines.py --out /tmp/sl-train --n 6000 --seed 1
[[ -d /tmp/sl-train2 ]] || $PY training/script_lines.py --out /tmp/sl-train2 --n 8000 --seed 3
[[ -d /tmp/sl-test ]] || $PY training/script_lines.py --out /tmp/sl-test --n 2000 --seed 2
for d in sl-train sl-train2 sl-test; do node training/script_features.mjs /tmp/$d $BUNDLE > /tmp/$d/features.jsonl; done
$PY training/script_gate.py --train /tmp/sl-train /tmp/sl-train2 --test /tmp/sl-test --write $BUNDLE

if [[ "$BUNDLE" != models/specula-line-base ]]; then
  echo "== $BUNDLE holds the distilled vision pass (not shipped)"
  exit 0
fi
node dist/src/cli/main.js eval --suite lines --drafter none --precision fp32 --write-config --out eval-results/lines.json
cp "$RUN/weights.pt" training/checkpoints/specula-line-base-vision.pt
cp "$RUN/log.jsonl" training/checkpoints/specula-line-base-vision.log.jsonl
echo "== shipped the distilled vision pass"
