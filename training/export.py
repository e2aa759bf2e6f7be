"""Export a checkpoint to a model bundle: models/<name>/{vision.onnx, decoder.onnx, config.json, golden.json}.

  /usr/bin/python3 training/export.py --ckpt training/checkpoints/base.pt --out models/specula-line-base

A formula bundle's golden file reads formula crops (a text line's reading by the formula model can be a degenerate
near tie that the int8 graph's rounding flips); rewritten alone, for the bundle exported already:

  /usr/bin/python3 training/formula.py --out training/runs/formula-golden --count 20 --seed 4242
  /usr/bin/python3 training/export.py --ckpt training/checkpoints/specula-formula-base.pt \
      --out models/specula-formula-base --golden-only --golden-pool training/runs/formula-golden

The exporter then runs the engine's own bundle check (node, onnxruntime-node) on the golden file and fails
loudly if onnxruntime disagrees with PyTorch. Build the TypeScript first (`npm run build`).
"""
import argparse
import base64
import datetime
import hashlib
import json
import os
import random
import subprocess
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from ctc_outputs import with_ctc_outputs  # noqa: E402
from data import collate, held_out, make_sample  # noqa: E402
from layer_inputs import split_layer_inputs  # noqa: E402
from position_mask import per_position_mask, windowed_case  # noqa: E402
from model import NEG, OCRModel, greedy_decode, load_model  # noqa: E402
from render import IMAGE_HEIGHT, MAX_WIDTH, READ_CHARS, READ_WIDTH, WIDTH_MULTIPLE  # noqa: E402

FOCAL = [1, 2]
OPSET = 17
MAX_LEN = 160
JOINT_CTC_WEIGHT = 0.7  # the engine's default (src/engine/strategies/options.ts)


class Vision(torch.nn.Module):
    def __init__(self, m: OCRModel):
        super().__init__()
        self.m = m

    def forward(self, pixels, widths, lines=None):
        return self.m.vision(pixels, widths, lines)


class Decoder(torch.nn.Module):
    def __init__(self, m: OCRModel):
        super().__init__()
        self.m = m

    def forward(self, tokens, positions, cache_k, cache_v, vis_k, vis_v, vis_mask, attn_bias):
        return self.m.decode(tokens, positions, cache_k, cache_v, vis_k, vis_v, vis_mask, attn_bias, focal=FOCAL)


def b64f32(a) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def golden_samples(pool_dir: str | None):
    """The golden file's two lines, of different widths: synthetic text lines, or two crops drawn from a pool
    (pdf_lines.py's format), clean: a formula bundle's golden reads formula crops, what it is for (on text lines its
    reading can be a degenerate near tie that any rounding flips)."""
    rng = random.Random(4242)
    if pool_dir:
        from PIL import Image
        from pdf_lines import PdfLinePool
        from render import normalise
        np.random.seed(4242)
        picked = rng.sample(PdfLinePool(pool_dir).items, 2)
        return [(normalise(Image.open(os.path.join(pool_dir, name)).convert("L")), text) for name, text in picked]
    from render import FontBank
    from textgen import TextSource
    src, bank = TextSource(4242), FontBank()
    np.random.seed(4242)
    return [make_sample(src, bank, rng, 40), make_sample(src, bank, rng, 20)]


def golden_case(model: OCRModel, samples, chars_per_frame: float | None):
    """PyTorch's outputs on `samples` (vision, a prefill, a step, a windowed prefill, greedy texts) for the engine's
    bundle check, and the modules and example inputs the graphs are exported with."""
    cfg = model.cfg
    L, H, dh = cfg.n_layers, cfg.n_heads, cfg.d_model // cfg.n_heads
    b = collate(samples)
    pixels, widths = b["pixels"], b["widths"]
    region = cfg.max_lines > 0
    # A region bundle's golden reads its two crops as lines 0 and 1 of a region, and its second row's text as
    # line 1 (positions max_text + i), so the line embeddings are part of what onnxruntime must match.
    lines = torch.tensor([0, 1]) if region else None
    vis_args = (pixels, widths, lines) if region else (pixels, widths)

    vision, decoder = Vision(model), Decoder(model)
    with torch.no_grad():
        vk, vv, ctc, vm = vision(*vis_args)
        B, V = pixels.shape[0], vk.shape[3]
        # prefill: BOS + 5 tokens against an 8-slot cache that holds nothing yet
        C, T = 8, 6
        toks = torch.tensor([[charset.BOS] + charset.encode("Speci"), [charset.BOS] + charset.encode("lines")])
        pos = torch.arange(T)[None].expand(B, T).contiguous()
        if region:
            pos = pos + torch.tensor([[0], [cfg.max_text]])
        ck = torch.zeros(L, B, H, C, dh)
        cv = torch.zeros_like(ck)
        causal = torch.where(torch.tril(torch.ones(T, T)) > 0, 0.0, NEG)
        bias = torch.cat([torch.full((T, C), NEG), causal], dim=1)[None].expand(B, T, C + T).contiguous()
        logits, hidden, nk, nv, mass = decoder(toks, pos, ck, cv, vk, vv, vm, bias)
        # step: the 6 tokens now in cache slots 0..5, one new token at position 6
        ck2, cv2 = ck.clone(), cv.clone()
        ck2[:, :, :, :T] = nk
        cv2[:, :, :, :T] = nv
        tok2 = torch.tensor([[charset.encode("a")[0]], [charset.encode(" ")[0]]])
        pos2 = pos[:, -1:] + 1
        bias2 = torch.cat([torch.where(torch.arange(C) < T, 0.0, NEG)[None, None].expand(B, 1, C),
                           torch.zeros(B, 1, 1)], dim=2).contiguous()
        logits2, _, _, _, mass2 = decoder(tok2, pos2, ck2, cv2, vk, vv, vm, bias2)
        out, _, _ = greedy_decode(model, pixels, widths, MAX_LEN, charset.BOS, charset.EOS,
                                  chars_per_frame=chars_per_frame or 1.0)

    golden = {
        "tolerance": 2e-3,
        "vision": {"inputs": {"pixels": {"shape": list(pixels.shape), "data": b64f32(pixels)},
                              "widths": widths.tolist(), **({"lines": lines.tolist()} if region else {})},
                   "expected": {"ctc_logits": {"shape": list(ctc.shape), "data": b64f32(ctc)},
                                "vis_mask": vm.tolist(),
                                "vis_k_sum": float(vk.sum()), "vis_v_sum": float(vv.sum())}},
        "prefill": {"inputs": {"tokens": toks.tolist(), "positions": pos.tolist(), "cache": C,
                               "attn_bias": {"shape": list(bias.shape), "data": b64f32(bias)}},
                    "expected": {"logits": {"shape": list(logits.shape), "data": b64f32(logits)},
                                 "hidden": {"shape": list(hidden.shape), "data": b64f32(hidden)},
                                 "new_k": {"shape": list(nk.shape), "data": b64f32(nk)},
                                 "new_v": {"shape": list(nv.shape), "data": b64f32(nv)},
                                 "vis_attn": {"shape": list(mass.shape), "data": b64f32(mass)}}},
        "step": {"inputs": {"tokens": tok2.tolist(), "positions": pos2.tolist(),
                            "attn_bias": {"shape": list(bias2.shape), "data": b64f32(bias2)}},
                 "expected": {"logits": {"shape": list(logits2.shape), "data": b64f32(logits2)},
                              "vis_attn": {"shape": list(mass2.shape), "data": b64f32(mass2)}}},
        "greedy": {"texts": [charset.decode(r) for r in out.tolist()], "labels": b["texts"]},
    }
    golden["windowed"] = windowed_case(decoder, vk, vv, vm, golden["prefill"]["inputs"])
    return golden, vision, decoder, vis_args, (toks, pos, ck, cv, vk, vv, vm, bias)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--eval-lines", type=int, default=200, help="held-out synthetic lines to score")
    ap.add_argument("--skip-check", action="store_true", help="do not run the onnxruntime parity check")
    ap.add_argument("--chars-per-frame", type=float, default=None,
                    help="most characters a reading spells per visual token (config decoding.charsPerFrame; a formula "
                         "bundle: LaTeX over a 32 px crop runs to ~4 a frame); absent: one, as text")
    ap.add_argument("--golden-pool", help="a crop pool (pdf_lines.py's format) to draw the golden file's two lines from "
                                          "instead of synthetic text lines: a formula bundle's formula crops")
    ap.add_argument("--golden-only", action="store_true",
                    help="rewrite only --out's golden.json (the bundle exported from --ckpt already), then check it")
    ap.add_argument("--focal-report", help="training/focal_layers.py's output: its best pair become the focal layers")
    ap.add_argument("--diffusion", metavar="MIN-MAX",
                    help="the checkpoint was trained to fill mask blocks of MIN..MAX positions (train.py "
                         "--diffusion-weight): enable the diffusion drafters and record their held-out accuracy")
    args = ap.parse_args()
    global FOCAL
    focal_report = None
    if args.focal_report:
        focal_report = json.load(open(args.focal_report))
        FOCAL = [int(i) for i in focal_report["best"]]
    if args.golden_only:
        # As the bundle was exported: its focal layers and its reading's length cap.
        bundle_cfg = json.load(open(os.path.join(args.out, "config.json")))
        FOCAL = [int(i) for i in bundle_cfg["focalLayers"]]
        args.chars_per_frame = args.chars_per_frame or bundle_cfg["decoding"].get("charsPerFrame")
    torch.set_num_threads(2)

    model, st = load_model(args.ckpt)
    cfg = model.cfg
    os.makedirs(args.out, exist_ok=True)
    L, H, dh = cfg.n_layers, cfg.n_heads, cfg.d_model // cfg.n_heads

    # ---- golden inputs: two real lines of different widths ------------------------------------------------
    golden, vision, decoder, vis_args, dec_args = golden_case(model, golden_samples(args.golden_pool), args.chars_per_frame)
    region = cfg.max_lines > 0
    if args.golden_only:
        with open(os.path.join(args.out, "golden.json"), "w") as f:
            json.dump(golden, f)
        print(f"wrote {os.path.join(args.out, 'golden.json')}: greedy texts {golden['greedy']['texts']}")
        check(args)
        return

    # ---- ONNX export -------------------------------------------------------------------------------
    vpath, dpath = os.path.join(args.out, "vision.onnx"), os.path.join(args.out, "decoder.onnx")
    torch.onnx.export(vision, vis_args, vpath, opset_version=OPSET,
                      input_names=["pixels", "widths"] + (["lines"] if region else []),
                      output_names=["vis_k", "vis_v", "ctc_logits", "vis_mask"],
                      dynamic_axes={"pixels": {0: "batch", 3: "width"}, "widths": {0: "batch"},
                                    **({"lines": {0: "batch"}} if region else {}),
                                    "vis_k": {1: "batch", 3: "visual"}, "vis_v": {1: "batch", 3: "visual"},
                                    "ctc_logits": {0: "batch", 1: "visual"}, "vis_mask": {0: "batch", 1: "visual"}})
    # The engine reads the CTC head's log-probabilities and each row's mean distribution, not its logits.
    onnx.save(with_ctc_outputs(onnx.load(vpath)), vpath)
    torch.onnx.export(decoder, dec_args, dpath, opset_version=OPSET,
                      input_names=["tokens", "positions", "cache_k", "cache_v", "vis_k", "vis_v", "vis_mask",
                                   "attn_bias"],
                      output_names=["logits", "hidden", "new_k", "new_v", "vis_attn"],
                      dynamic_axes={"tokens": {0: "batch", 1: "new"}, "positions": {0: "batch", 1: "new"},
                                    "cache_k": {1: "batch", 3: "cache"}, "cache_v": {1: "batch", 3: "cache"},
                                    "vis_k": {1: "batch", 3: "visual"}, "vis_v": {1: "batch", 3: "visual"},
                                    "vis_mask": {0: "batch", 1: "visual"},
                                    "attn_bias": {0: "batch", 1: "new", 2: "keys"},
                                    "logits": {0: "batch", 1: "new"}, "hidden": {0: "batch", 1: "new"},
                                    "new_k": {1: "batch", 3: "new"}, "new_v": {1: "batch", 3: "new"},
                                    "vis_attn": {0: "batch", 1: "new", 2: "visual"}})
    # The stacked K/V inputs become one per layer, so that onnxruntime does not copy them on every forward.
    onnx.save(split_layer_inputs(onnx.load(dpath)), dpath)
    # The visual mask per new token ([B, 1|T, V]), so focal pruning can give each drafted position its own window.
    onnx.save(per_position_mask(onnx.load(dpath)), dpath)

    with open(os.path.join(args.out, "golden.json"), "w") as f:
        json.dump(golden, f)

    # ---- held-out accuracy ---------------------------------------------------------------------------
    from train import evaluate
    ar, ctc_cer, _ = evaluate(model, held_out(args.eval_lines), max_len=MAX_LEN)
    from joint import evaluate_joint
    joint_cer = evaluate_joint(model, held_out(args.eval_lines), JOINT_CTC_WEIGHT)
    regions = None
    if region:
        from region import held_out_regions
        from train_region import evaluate as evaluate_regions
        rs = held_out_regions(max_lines=min(6, cfg.max_lines))
        rcer, count_ok = evaluate_regions(model, rs)
        regions = {"regions": len(rs), "lines": sum(len(r) for r in rs), "cerAr": round(rcer, 5),
                   "lineCountRight": round(count_ok, 4)}
    prev, prev_config = {}, {}
    cpath = os.path.join(args.out, "config.json")
    if os.path.exists(cpath):
        prev_config = json.load(open(cpath))
        prev = prev_config.get("accuracy", {})
    diffusion = None
    if args.diffusion:
        from train import evaluate_blocks
        lo, hi = (int(x) for x in args.diffusion.split("-"))
        acc8, lead8 = evaluate_blocks(model, held_out(args.eval_lines), block_len=8)
        diffusion = {"blockMin": lo, "blockMax": hi,
                     "heldOutBlock8": {"accuracyByPosition": [round(a, 4) for a in acc8], "leadingRun": round(lead8, 3)}}
        # The AR path's accuracy must hold against the AR-only bundle this one replaces: keep that bundle's
        # numbers beside the new ones.
        if prev_config and not prev_config.get("heads", {}).get("diffusion"):
            prev["arOnlyBaseline"] = {"steps": prev_config.get("training", {}).get("steps"),
                                      **{k: v for k, v in prev.items() if k in ("heldOutSynthetic", "evalLines")}}
    config = {
        "name": os.path.basename(os.path.normpath(args.out)),
        "format": 1,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "vocab": charset.VOCAB,
        "specialIds": {"pad": charset.PAD, "bos": charset.BOS, "eos": charset.EOS, "mask": charset.MASK,
                       "unk": charset.UNK, "ctcBlank": charset.PAD},
        "dims": {"dModel": cfg.d_model, "nLayers": L, "nHeads": H, "headDim": dh, "dFf": cfg.d_ff,
                 "vocabSize": cfg.vocab_size, "maxVisual": cfg.max_visual, "maxText": cfg.max_text},
        "image": {"height": IMAGE_HEIGHT, "widthMultiple": WIDTH_MULTIPLE, "visualStride": WIDTH_MULTIPLE,
                  "maxWidth": MAX_WIDTH, "readWidth": READ_WIDTH,
                  "readChars": READ_CHARS, "normalise": "minmax-ink-one"},
        "decoding": {"maxNewTokens": MAX_LEN * (cfg.max_lines or 1), "negativeBias": NEG,
                     **({"charsPerFrame": args.chars_per_frame} if args.chars_per_frame else {})},
        # A region bundle reads up to maxLines line crops as one sequence: BOS opens each line (the engine
        # gives it back as a line break), a text position is line * lineStride + index within the line, and
        # the vision pass takes each crop's line index (input `lines`).
        **({"region": {"maxLines": cfg.max_lines, "lineStride": cfg.max_text,
                       **({"training": st["region"]} if "region" in st else {}),
                       **({"baseStep": st["base_step"]} if "base_step" in st else {})}} if region else {}),
        "heads": {"lm": True, "ctc": True, "mtp": False, "diffusion": diffusion is not None},
        **({"diffusion": diffusion} if diffusion else {}),
        "focalLayers": FOCAL,
        **({"focalMeasurement": {"characters": focal_report["characters"], "checkpointStep": focal_report.get("checkpointStep"),
                                 "recall": focal_report["recall"]}} if focal_report else {}),
        "files": {name: {"path": f"{name}.onnx", "sha256": sha256(os.path.join(args.out, f"{name}.onnx"))}
                  for name in ["vision", "decoder"]},
        "golden": "golden.json",
        "training": {"steps": st.get("step"), "linesSeen": st.get("seen"), "opset": OPSET,
                     "torch": torch.__version__},
        "accuracy": {**prev, "heldOutSynthetic": {"lines": args.eval_lines, "cerAr": round(ar, 5),
                                                  "cerCtc": round(ctc_cer, 5), "cerJoint": round(joint_cer, 5),
                                                  "jointCtcWeight": JOINT_CTC_WEIGHT},
                     **({"heldOutSyntheticRegions": regions} if regions else {})},
    }
    with open(cpath, "w") as f:
        json.dump(config, f, indent=1, ensure_ascii=False)
    size = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    print(f"exported {args.out}: {size / 1e6:.1f} MB; held-out synthetic CER AR {ar:.4f}, CTC {ctc_cer:.4f}, joint {joint_cer:.4f}")
    if size > 40e6:
        sys.exit(f"bundle is {size / 1e6:.1f} MB, over the 40 MB limit")

    check(args)


def check(args):
    """The engine's own bundle check (node, onnxruntime-node) on the golden file, unless --skip-check."""
    if args.skip_check:
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(["node", os.path.join(root, "dist/src/cli/main.js"), "check-bundle", args.out])
    if r.returncode != 0:
        sys.exit("onnxruntime disagrees with PyTorch on golden.json: the bundle is NOT valid")
    print("onnxruntime matches PyTorch on golden.json")


if __name__ == "__main__":
    main()
