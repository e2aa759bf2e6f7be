"""The decoder graph taking its visual mask per new token: `vis_mask` [batch, mask_rows, visual], where mask_rows is 1
(every new token sees the same visual tokens: the engine's ordinary forward) or the forward's new tokens (each
drafted position attends to its own visual window: focal pruning while verifying a draft, issue 27).

PyTorch exports the [B, V] mask as Sub, Mul, Unsqueeze to [B, 1, V] and an Expand to [B, T, V] before it is joined
to the text bias. Dropping the Unsqueeze lets the Expand take either [B, 1, V] (broadcast: the same numbers as
before, bit for bit) or [B, T, V] (one row per new token). Nothing else reads the mask.

The bundle's golden.json then holds a case for it (`windowed`: the golden prefill with each new token seeing a
window of its own, and PyTorch's logits and focal attention for it), which the engine's bundle check runs.

    /usr/bin/python3 training/position_mask.py --bundle models/specula-line-base --ckpt training/checkpoints/specula-line-base.pt

converts an older bundle in place (the decoder, its golden case, its sha256 in config.json; the checkpoint must be
the one the bundle was exported from: the golden's prefill is checked against it first). export.py does the same
for every bundle it writes. Then run `specula check-bundle`.
"""
import argparse
import base64
import hashlib
import json
import os
import sys

import numpy as np
import onnx
import torch
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import load_model  # noqa: E402


def windows_mask(vis_mask: torch.Tensor, t: int) -> torch.Tensor:
    """[B,V] -> [B,T,V]: new token i of row b sees a third of the row's real visual tokens, moving right with i."""
    b, v = vis_mask.shape
    out = torch.zeros(b, t, v)
    for r in range(b):
        real = int(vis_mask[r].sum())
        width = max(1, real // 3)
        for i in range(t):
            lo = min(real - width, (i * (real - width)) // max(1, t - 1))
            out[r, i, lo:lo + width] = 1.0
    return out


def windowed_case(decode, vis_k, vis_v, vis_mask, prefill: dict) -> dict:
    """The golden prefill with per-token windows: `decode` is the model's decode (focal layers bound)."""
    toks = torch.tensor(prefill["tokens"])
    pos = torch.tensor(prefill["positions"])
    bias = unpack(prefill["attn_bias"])
    L, B, H, _, dh = vis_k.shape
    c = prefill["cache"]
    cache = torch.zeros(L, B, H, c, dh)
    mask = windows_mask(vis_mask, toks.shape[1])
    with torch.no_grad():
        logits, _, _, _, mass = decode(toks, pos, cache, cache.clone(), vis_k, vis_v, mask, bias)
    return {"inputs": {"vis_mask": pack(mask)}, "expected": {"logits": pack(logits), "vis_attn": pack(mass)}}


def pack(a) -> dict:
    return {"shape": list(a.shape), "data": base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()}


def unpack(p: dict) -> torch.Tensor:
    return torch.from_numpy(np.frombuffer(base64.b64decode(p["data"]), dtype="<f4").reshape(p["shape"]).copy())


def per_position_mask(model: onnx.ModelProto) -> onnx.ModelProto:
    g = model.graph
    mask = next((i for i in g.input if i.name == "vis_mask"), None)
    if mask is None:
        raise SystemExit("the graph has no vis_mask input")
    dims = mask.type.tensor_type.shape.dim
    if len(dims) == 3:
        return model  # already per position
    if len(dims) != 2:
        raise SystemExit(f"vis_mask has rank {len(dims)}, expected 2")
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)

    def only_reader(name: str, op: str) -> onnx.NodeProto:
        nodes = readers.get(name, [])
        if len(nodes) != 1 or nodes[0].op_type != op:
            raise SystemExit(f"{name}: expected one {op} reading it, found {[n.op_type for n in nodes]}")
        return nodes[0]

    sub = only_reader("vis_mask", "Sub")
    mul = only_reader(sub.output[0], "Mul")
    unsq = only_reader(mul.output[0], "Unsqueeze")
    expand = only_reader(unsq.output[0], "Expand")
    # The Expand reads the [B, Tm, V] bias directly; the Unsqueeze goes.
    expand.input[0] = mul.output[0]
    g.node.remove(unsq)
    # Its axes constant, unless something else reads it.
    if len(unsq.input) > 1 and len(readers.get(unsq.input[1], [])) == 1:
        for n in [n for n in g.node if n.op_type == "Constant" and unsq.input[1] in n.output]:
            g.node.remove(n)
        for t in [t for t in g.initializer if t.name == unsq.input[1]]:
            g.initializer.remove(t)
    batch, visual = dims[0], dims[1]
    new_dims = [batch.dim_param or batch.dim_value, "mask_rows", visual.dim_param or visual.dim_value]
    g.input.remove(mask)
    g.input.insert(list(i.name for i in g.input).index("attn_bias"),
                   helper.make_tensor_value_info("vis_mask", mask.type.tensor_type.elem_type, new_dims))
    # The shapes recorded for the old layout would now be wrong: onnxruntime infers them again.
    stale = {sub.output[0], mul.output[0], unsq.output[0]}
    for v in [v for v in g.value_info if v.name in stale]:
        g.value_info.remove(v)
    onnx.checker.check_model(model)
    return model


def convert_bundle(bundle: str, ckpt: str) -> None:
    """An older bundle in place: its decoder per position, its golden's windowed case, its config's sha256."""
    model, _ = load_model(ckpt)
    with open(os.path.join(bundle, "config.json")) as f:
        config = json.load(f)
    focal = tuple(config["focalLayers"])
    with open(os.path.join(bundle, "golden.json")) as f:
        golden = json.load(f)
    vin = golden["vision"]["inputs"]
    pixels, widths = unpack(vin["pixels"]), torch.tensor(vin["widths"])
    with torch.no_grad():
        vis_k, vis_v, _, vis_mask = model.vision(pixels, widths, torch.tensor(vin["lines"])) if "lines" in vin else model.vision(pixels, widths)

    def decode(*a):
        return model.decode(*a, focal=focal)

    # The checkpoint must be the bundle's: its plain prefill gives the golden's logits.
    pre = golden["prefill"]["inputs"]
    L, B, H, _, dh = vis_k.shape
    cache = torch.zeros(L, B, H, pre["cache"], dh)
    with torch.no_grad():
        logits = decode(torch.tensor(pre["tokens"]), torch.tensor(pre["positions"]), cache, cache.clone(), vis_k, vis_v, vis_mask, unpack(pre["attn_bias"]))[0]
    gap = float((logits - unpack(golden["prefill"]["expected"]["logits"])).abs().max())
    if gap > golden["tolerance"]:
        raise SystemExit(f"{ckpt} is not {bundle}'s checkpoint: its prefill logits differ by {gap}")
    golden["windowed"] = windowed_case(decode, vis_k, vis_v, vis_mask, pre)
    path = os.path.join(bundle, "decoder.onnx")
    onnx.save(per_position_mask(onnx.load(path)), path)
    with open(os.path.join(bundle, "golden.json"), "w") as f:
        json.dump(golden, f)
    # Only the decoder's sha256 changes in config.json: replaced in its text, which stays as it was written.
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    config_path = os.path.join(bundle, "config.json")
    with open(config_path, encoding="utf-8") as f:
        text = f.read()
    with open(config_path, "w", encoding="utf-8") as f:
        f.write(text.replace(config["files"]["decoder"]["sha256"], digest))
    print(f"{bundle}: decoder takes per-token visual masks; golden windowed case from {ckpt}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", help="a decoder.onnx to rewrite (the graph only)")
    ap.add_argument("--out")
    ap.add_argument("--bundle", help="a bundle folder to convert in place (needs --ckpt)")
    ap.add_argument("--ckpt")
    args = ap.parse_args()
    if args.bundle:
        if not args.ckpt:
            raise SystemExit("--bundle needs --ckpt (the checkpoint the bundle was exported from)")
        convert_bundle(args.bundle, args.ckpt)
        return
    if not args.path:
        raise SystemExit("give a decoder.onnx, or --bundle with --ckpt")
    model = onnx.load(args.path)
    onnx.save(per_position_mask(model), args.out or args.path)


if __name__ == "__main__":
    main()
