#!/usr/bin/env bash
# One run on the lent GPU machine (PyTorch with CUDA, no Debian fonts, no network): continue training from the
# committed checkpoint for MINUTES, and leave the new weights and log in $OUT. From this machine:
#   /usr/bin/python3 training/pack_assets.py --out training/assets        # once: fonts and corpora, ~42 MB
#   device run: bash training/gpu.sh 8        with carry: ["training/assets"]
# then copy the returned weights.pt over training/checkpoints/specula-line-base.pt and export (training/README.md).
# Written for that machine but not yet run on one: the task that wrote it was lent no GPU.
set -euo pipefail
MINUTES=${1:-8}
export SPECULA_ASSETS=training/assets
OUT=${OUT:-/tmp/specula-gpu}
mkdir -p "$OUT/run"
python3 -c "import torch, PIL, numpy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
workers=$(( $(nproc) - 2 ))
python3 training/train.py --run "$OUT/run" --init training/checkpoints/specula-line-base.pt \
  --device cuda --workers "$workers" --pixel-budget 160000 --max-batch 512 --lr 1e-3 --warmup 50 \
  --guide-weight 0.5 --cur-ramp 1 --save-every 200 --eval-every 1000000 --hours "$(python3 -c "print($MINUTES / 60)")"
python3 - "$OUT/run" <<'PY'
import sys, torch
sys.path.insert(0, "training")
from data import held_out
from train import evaluate
from model import ModelConfig, OCRModel
st = torch.load(f"{sys.argv[1]}/weights.pt", map_location="cuda")
m = OCRModel(ModelConfig(**st["config"])).cuda()
m.load_state_dict(st["model"])
ar, ctc, _ = evaluate(m, held_out(200), batch=200)
print(f"step {st['step']}: held-out synthetic CER AR {ar:.4f}, CTC {ctc:.4f}")
PY
rm -f "$OUT/run/last.pt"  # only the weights come back: the optimiser state is not worth the transfer
