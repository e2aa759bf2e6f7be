#!/usr/bin/env bash
# One vision-pass distillation run on the lent GPU machine (training/distill_vision.py, "The distilled vision pass" in
# training/README.md): continue the committed student from its teacher for MINUTES, cooling the lr down over the
# last 45% of them by the clock, and leave the student's weights and log in $OUT/run. The fonts and corpora travel
# as for gpu.sh (training/packed, made once with pack_assets.py); the device tool's run: `bash
# training/gpu_vision.sh 7` with carry ["training/packed"], after `bash infra/device-tree.sh slim training`. Then,
# here, make a bundle of the returned weights.pt (training/finish_vision.sh). INIT=weights.pt continues a student
# (the 0.5.x one, not shipped, is in history: `git show 65636ec:training/checkpoints/specula-line-base-stem.pt`);
# EXTRA="..." adds or overrides distill_vision.py's arguments, e.g. EXTRA="--lm-weight 0.5"; AMP=--amp for bf16.
set -euo pipefail
MINUTES=${1:-7}
INIT=${INIT:-}
TEACHER=${TEACHER:-training/checkpoints/specula-line-base.pt}
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-/tmp/specula-stem}
mkdir -p "$OUT/run"
source training/gpu_setup.sh
"$PY" training/distill_vision.py --teacher "$TEACHER" ${INIT:+--init "$INIT"} --run "$OUT/run" --device "$DEVICE" ${AMP:-} \
  --threads 2 --workers "$WORKERS" $PIPE --pixel-budget "${PIXEL_BUDGET:-160000}" --max-batch 512 --pool 1024 \
  --lr "${LR:-1e-3}" --warmup 100 --decay-frac 0.45 --decay-to 2e-5 --save-every 300 --eval-every "${EVAL_EVERY:-1500}" \
  --hours "$("$PY" -c "print($MINUTES / 60)")" ${EXTRA:-}
rm -f "$OUT/run/last.pt" "$OUT/run/pid"  # only the weights come back: the optimiser state is not worth the transfer
