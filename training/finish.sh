#!/usr/bin/env bash
# End a base training run and ship it: stop the run (it writes weights.pt on SIGTERM), measure the focal layers,
# export the bundle (mask blocks 2-16), re-fit the MTP and P-MTP heads to the new base, export them into the
# bundle, quantise its int8 vision graph and fit its script gate again (both are the model's; the exporter writes a
# config.json without them), score the real line sets into config.json, and keep the weights and logs as the
# committed checkpoints. A run that did not start from specula-line-base.pt needs its parent's log put between
# the two logs by hand (0.4.0's did: training/README.md, "Checkpoints").
#
#   bash training/finish.sh [RUN] [MTP_HOURS] [PMTP_HOURS]      (defaults: training/runs/base, 0.15, 0.2)
#
# Needs `npm run build` first (the exporter calls check-bundle) and the evaluation folder for the last step.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${1:-training/runs/base}
MTP_HOURS=${2:-0.15}
PMTP_HOURS=${3:-0.2}
PY=/usr/bin/python3
export OMP_WAIT_POLICY=passive

if [[ -f "$RUN/pid" ]] && kill -0 "$(cat "$RUN/pid")" 2>/dev/null; then
  pid=$(cat "$RUN/pid")
  kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 2; done
fi
step=$(tail -n 1 "$RUN/log.jsonl" | $PY -c 'import json,sys; print(json.loads(sys.stdin.read())["step"])')
echo "== run stopped at step $step"

$PY training/focal_layers.py --ckpt "$RUN/weights.pt" --out training/focal.json
$PY training/export.py --ckpt "$RUN/weights.pt" --out models/specula-line-base --diffusion 2-16 --focal-report training/focal.json

rm -rf training/runs/mtp-refit
$PY training/mtp.py train --base "$RUN/weights.pt" --init training/checkpoints/specula-mtp-head.pt --route 0.2 \
  --run training/runs/mtp-refit --hours "$MTP_HOURS"
$PY training/mtp.py export --base "$RUN/weights.pt" --head training/runs/mtp-refit/mtp.pt --bundle models/specula-line-base

# The P-MTP head: from its last checkpoint where there is one (else from the MTP head, with the depth curriculum).
rm -rf training/runs/pmtp-refit
PMTP_INIT=training/checkpoints/specula-pmtp-head.pt
[[ -f "$PMTP_INIT" ]] || PMTP_INIT=training/runs/mtp-refit/mtp.pt
$PY training/mtp.py train --base "$RUN/weights.pt" --init "$PMTP_INIT" --depth 8 --progressive-steps 240 \
  --run training/runs/pmtp-refit --hours "$PMTP_HOURS"
$PY training/mtp.py export --name pmtp --base "$RUN/weights.pt" --head training/runs/pmtp-refit/mtp.pt --bundle models/specula-line-base

$PY training/quantize.py --bundle models/specula-line-base --ckpt "$RUN/weights.pt" --out /tmp/specula-int8 --install
node dist/src/cli/main.js check-bundle models/specula-line-base

# The script gate reads the CTC head's distributions through the default (int8) graph: fitted after it. Its lines do
# not depend on the model, so lines drawn while the run trained are kept.
[[ -f /tmp/sl-train/labels.jsonl ]] || $PY training/script_lines.py --out /tmp/sl-train --n 6000 --seed 1
[[ -f /tmp/sl-train2/labels.jsonl ]] || $PY training/script_lines.py --out /tmp/sl-train2 --n 8000 --seed 3
[[ -f /tmp/sl-test/labels.jsonl ]] || $PY training/script_lines.py --out /tmp/sl-test --n 2000 --seed 2
for d in sl-train sl-train2 sl-test; do node training/script_features.mjs /tmp/$d > /tmp/$d/features.jsonl; done
$PY training/script_gate.py --train /tmp/sl-train /tmp/sl-train2 --test /tmp/sl-test --write models/specula-line-base

node dist/src/cli/main.js eval --suite lines --drafter none --precision fp32 --write-config --out eval-results/lines.json

cp "$RUN/weights.pt" training/checkpoints/specula-line-base.pt
cat training/checkpoints/specula-line-base.log.jsonl "$RUN/log.jsonl" > /tmp/specula-base-log.jsonl
mv /tmp/specula-base-log.jsonl training/checkpoints/specula-line-base.log.jsonl
cp training/runs/mtp-refit/mtp.pt training/checkpoints/specula-mtp-head.pt
cat training/checkpoints/specula-mtp-head.log.jsonl training/runs/mtp-refit/log.jsonl > /tmp/specula-mtp-log.jsonl
mv /tmp/specula-mtp-log.jsonl training/checkpoints/specula-mtp-head.log.jsonl
cp training/runs/pmtp-refit/mtp.pt training/checkpoints/specula-pmtp-head.pt
cat training/checkpoints/specula-pmtp-head.log.jsonl training/runs/pmtp-refit/log.jsonl 2>/dev/null > /tmp/specula-pmtp-log.jsonl || true
mv /tmp/specula-pmtp-log.jsonl training/checkpoints/specula-pmtp-head.log.jsonl
echo "== shipped step $step"
