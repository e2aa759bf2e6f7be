#!/usr/bin/env bash
# One run on the lent GPU machine (PyTorch with CUDA, no Debian fonts, no network): continue training from a
# committed checkpoint for MINUTES, cooling the lr down over the last 45% of them by the clock (the machine's
# speed is not known beforehand), and leave the new weights and log in $OUT/run. From this machine, once:
#   /usr/bin/python3 training/pack_assets.py --out training/assets && mkdir -p training/packed &&
#     tar -C training -cJf training/packed/assets.tar.xz assets      # fonts and corpora, 15 MB packed
# then `bash infra/device-tree.sh slim training` (the tree under the device tool's 64 MiB) and the device tool's run:
# `bash training/gpu.sh 6.6` (about 8 minutes in all) with carry ["training/packed"]; then `infra/device-tree.sh
# restore`, and export the returned weights.pt (training/README.md). EXTRA="..." adds or overrides train.py's arguments
# (argparse keeps the last), e.g. EXTRA="--pdf-lines training/runs/pdf-lines --pdf-share 0.15 --receipt-share 0.2".
set -euo pipefail
MINUTES=${1:-7}
INIT=${INIT:-training/checkpoints/specula-line-base.pt}
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-/tmp/specula-gpu}
mkdir -p "$OUT/run"
source training/gpu_setup.sh
"$PY" training/train.py --run "$OUT/run" --init "$INIT" --device "$DEVICE" --threads 2 --workers "$WORKERS" $PIPE \
  --pixel-budget "${PIXEL_BUDGET:-160000}" --max-batch 512 --pool 1024 --lr "${LR:-1e-3}" --warmup 150 \
  --decay-frac 0.45 --decay-to 2e-5 --guide-weight 0.5 --cur-ramp 1 --diffusion-weight 0.75 --diffusion-blocks 10 \
  --block-min 2 --block-max 10 --save-every 300 --eval-every "${EVAL_EVERY:-1500}" \
  --hours "$("$PY" -c "print($MINUTES / 60)")" ${EXTRA:-}
"$PY" - "$OUT/run" "$DEVICE" <<'PY'
import sys, torch
sys.path.insert(0, "training")
from data import held_out
from train import evaluate, evaluate_blocks
from model import ModelConfig, OCRModel
st = torch.load(f"{sys.argv[1]}/weights.pt", map_location=sys.argv[2], weights_only=False)
m = OCRModel(ModelConfig(**st["config"])).to(sys.argv[2])
m.load_state_dict(st["model"])
lines = held_out(200)
ar, ctc, _ = evaluate(m, lines, batch=200)
acc, lead = evaluate_blocks(m, lines)
print(f"step {st['step']} ({st['seen']} lines): held-out synthetic CER AR {ar:.4f}, CTC {ctc:.4f}; "
      f"block-8 accuracy {[round(a, 3) for a in acc]}, leading run {lead:.2f}")
PY
rm -f "$OUT/run/last.pt" "$OUT/run/pid"  # only the weights come back: the optimiser state is not worth the transfer
