#!/usr/bin/env bash
# One run on the lent GPU machine (PyTorch with CUDA, no Debian fonts, no network): continue training from a
# committed checkpoint for MINUTES, cooling the lr down over the last 45% of them by the clock (the machine's
# speed is not known beforehand), and leave the new weights and log in $OUT/run. From this machine, once:
#   /usr/bin/python3 training/pack_assets.py --out training/assets && mkdir -p training/packed &&
#     tar -C training -cJf training/packed/assets.tar.xz assets      # fonts and corpora, 15 MB packed
# then the device tool's run: `bash training/gpu.sh 6.6` (about 8 minutes in all) with carry ["training/packed"]; copy the returned
# weights.pt over the checkpoint and export (training/README.md). EXTRA="..." adds or overrides train.py's arguments
# (argparse keeps the last), e.g. EXTRA="--pdf-lines training/runs/pdf-lines --pdf-share 0.15 --receipt-share 0.2".
set -euo pipefail
MINUTES=${1:-7}
INIT=${INIT:-training/checkpoints/specula-line-base-next.pt}
DEVICE=${DEVICE:-cuda}
WORKERS=${WORKERS:-$(( $(nproc) - 2 ))}
OUT=${OUT:-/tmp/specula-gpu}
PY=${PYTHON:-python3}
mkdir -p "$OUT/run"
[ -d training/assets ] || tar -C training -xJf training/packed/assets.tar.xz
export SPECULA_ASSETS=training/assets PYTHONUNBUFFERED=1
"$PY" -c "import torch, PIL, numpy, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'pillow', PIL.__version__, 'numpy', numpy.__version__)"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || true
# Batches cross from the data workers in shared memory (about 1 GB in flight); containers often give /dev/shm
# 64 MB. Grow it, and where that is refused, send the batches through pipes.
timeout 5 mount -o remount,size=16G /dev/shm 2>/dev/null || true
shm_kb=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1 || echo 0)
PIPE=""
if [ "${shm_kb:-0}" -lt 8000000 ]; then PIPE="--pipe-batches"; fi
echo "/dev/shm: ${shm_kb:-0} kB free ${PIPE:-(shared-memory batches)}"; nproc; free -g 2>/dev/null | head -2 || true
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
