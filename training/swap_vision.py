"""Put a distilled vision pass (distill_vision.py: a narrower stem, and maybe a vision tower of its own) into the
line bundle its teacher was exported to.

The decoder's layers and heads are the teacher's, bit for bit (checked here), so the bundle keeps its decoder, MTP
and P-MTP heads and focal layers; the float vision graph and golden.json are exported again from the student, and
config.json records the stem and the tower. The int8 vision graph and the script gate read the vision pass, so they are removed
here and must be made again (training/finish_vision.sh runs the whole sequence).

    /usr/bin/python3 training/swap_vision.py --ckpt training/runs/stem/weights.pt --teacher training/checkpoints/specula-line-base.pt \\
        --bundle models/specula-line-base
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from distill_vision import STUDENT_PARTS, stem_macs, tower_macs  # noqa: E402
from export import sha256  # noqa: E402
from model import ModelConfig  # noqa: E402


def same_graph(a: str, b: str) -> bool:
    """Two ONNX graphs with the same operators and the same constants (the exporter may name and order them
    differently from one export to the next). A cheap guard only: check-bundle's golden check, which runs the kept
    decoder on the student's vision outputs against PyTorch's, is the proof."""
    ga, gb = onnx.load(a).graph, onnx.load(b).graph
    if Counter(n.op_type for n in ga.node) != Counter(n.op_type for n in gb.node):
        return False
    wa = sorted((numpy_helper.to_array(t) for t in ga.initializer), key=lambda x: (x.shape, float(np.sum(x))))
    wb = sorted((numpy_helper.to_array(t) for t in gb.initializer), key=lambda x: (x.shape, float(np.sum(x))))
    return len(wa) == len(wb) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(wa, wb))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True, help="distill_vision.py's weights.pt")
    ap.add_argument("--teacher", required=True, help="the checkpoint the bundle was exported from")
    ap.add_argument("--bundle", required=True)
    args = ap.parse_args()
    student = torch.load(args.ckpt, map_location="cpu", weights_only=False)
    teacher = torch.load(args.teacher, map_location="cpu", weights_only=False)
    if "stemDistilled" not in student:
        raise SystemExit(f"{args.ckpt} is not a distilled vision pass's checkpoint")
    tower = student["config"].get("vision_d_ff", 0)
    own = STUDENT_PARTS + (("ctc_head.",) if tower else ())  # with a tower, the CTC head reads the tower alone
    for k, v in teacher["model"].items():
        if not k.startswith(own) and not torch.equal(v, student["model"][k]):
            raise SystemExit(f"{k} differs from the teacher's: only the stem and the vision tower may change")
    cpath = os.path.join(args.bundle, "config.json")
    cfg = json.load(open(cpath))
    if cfg["training"]["steps"] != teacher.get("step"):
        raise SystemExit(f"{args.bundle} was exported from step {cfg['training']['steps']}, the teacher is step {teacher.get('step')}")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        d = cfg.get("diffusion")
        # The bundle's focal layers, as a report: the decoder graph averages their attention (its vis_attn output).
        fm = cfg.get("focalMeasurement", {})
        report = os.path.join(tmp, "focal.json")
        with open(report, "w") as f:
            json.dump({"best": cfg["focalLayers"], "characters": fm.get("characters"), "checkpointStep": fm.get("checkpointStep"),
                       "recall": fm.get("recall")}, f)
        out = os.path.join(tmp, "bundle")
        cmd = [sys.executable, os.path.join(root, "training", "export.py"), "--ckpt", args.ckpt, "--out", out, "--skip-check",
               "--focal-report", report]
        if d:
            cmd += ["--diffusion", f"{d['blockMin']}-{d['blockMax']}"]
        subprocess.run(cmd, check=True)
        if not same_graph(os.path.join(out, "decoder.onnx"), os.path.join(args.bundle, cfg["files"]["decoder"]["path"])):
            raise SystemExit("the student's decoder graph is not the bundle's: refusing to keep the bundle's heads")
        shutil.copyfile(os.path.join(out, "vision.onnx"), os.path.join(args.bundle, cfg["files"]["vision"]["path"]))
        # The heads' golden cases (mtp.py export) feed them random states, not the vision pass: they stay.
        gpath = os.path.join(args.bundle, cfg["golden"])
        golden = json.load(open(os.path.join(out, "golden.json")))
        golden.update({k: v for k, v in json.load(open(gpath)).items() if k not in golden})
        with open(gpath, "w") as f:
            json.dump(golden, f)
        fresh = json.load(open(os.path.join(out, "config.json")))
    cfg["files"]["vision"]["sha256"] = sha256(os.path.join(args.bundle, cfg["files"]["vision"]["path"]))
    # The int8 graph and the script gate were the teacher's stem's: gone until quantize.py and script_gate.py run.
    int8 = cfg["files"].pop("visionInt8", None)
    if int8:
        os.remove(os.path.join(args.bundle, int8["path"]))
    cfg.pop("int8", None)
    cfg.pop("scriptGate", None)
    cfg["accuracy"]["heldOutSynthetic"] = fresh["accuracy"]["heldOutSynthetic"]
    if d and "diffusion" in fresh:
        cfg["diffusion"]["heldOutBlock8"] = fresh["diffusion"]["heldOutBlock8"]
    sd = student["stemDistilled"]
    scfg, tcfg = ModelConfig(**student["config"]), ModelConfig(**teacher["config"])
    cfg["training"]["stem"] = {"distilled": True, "channels": sd["channels"], "steps": sd["steps"], "lines": sd["lines"],
                               "multiplyAddsPerColumn": stem_macs(sd["channels"]),
                               "teacherMultiplyAddsPerColumn": stem_macs(tcfg.stem_channels)}
    if tower:
        cfg["training"]["visionTower"] = {"feedForward": tower, "multiplyAddsPerColumn": tower_macs(scfg),
                                          "teacherMultiplyAddsPerColumn": tower_macs(tcfg)}
    cfg["created"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with open(cpath, "w") as f:
        json.dump(cfg, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{args.bundle}: the distilled vision pass is in; now quantize.py --install, check-bundle and the script gate")


if __name__ == "__main__":
    main()
