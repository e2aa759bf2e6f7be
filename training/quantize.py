"""An int8 vision graph for a line (or formula) bundle: the CNN stem's convolutions and every matrix product with a constant
weight (the projection, the transformer's, the CTC head) as static QDQ: uint8 activations at ranges calibrated on
synthetic lines (never ../shared/eval), int8 weights per output channel, int32 biases. onnxruntime fuses them
into QLinearConv, QLinearMul, a uint8 MaxPool and MatMulIntegerToFloat: integer kernels (VNNI where the CPU
has it), about twice the float graph's speed on CPU. Weights keep to 7 bits so that CPUs without VNNI compute the
same sums (WEIGHT_BITS).

Static, not dynamic: with fixed scales a line's visual tokens never depend on the other lines in its batch (a
dynamic scale is taken over the whole batch tensor), so a page reads the same alone or beside other jobs.
The decoder stays float: it is the verifier, and a batch-dependent or coarser logit would let a drafter's
tokens or another line move a near tie.

    /usr/bin/python3 training/quantize.py --bundle models/specula-line-base \
        --ckpt training/checkpoints/specula-line-base.pt --out /tmp/int8 [--lines 1024] [--install]

A formula bundle is calibrated on formula crops as well (60% of the draws, as in its training; its golden file reads
formula crops too: export.py --golden-only --golden-pool):

    /usr/bin/python3 training/formula.py --out training/runs/formula-calib --count 400 --seed 31337
    /usr/bin/python3 training/quantize.py --bundle models/specula-formula-base \
        --ckpt training/checkpoints/specula-formula-base.pt --out /tmp/int8 --pool training/runs/formula-calib --install

Writes OUT/vision.onnx and OUT/quantize.json (the calibration); --install copies the graph into the bundle as
vision.int8.onnx and records it in config.json (files.visionInt8, int8: tolerance and calibration; the int8 section
is replaced whole, measured accuracy included, so measure again). Then check it
(`npx specula check-bundle DIR`) and measure it (`npm run eval -- --suite lines --precision int8|fp32`).
"""
import argparse
import json
import os
import random
import subprocess

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from data import collate, make_sample
from model import load_model
from vision_rewrite import rewrite_file

# The golden check's bound on |int8 - PyTorch float|. Step 13000: the vision graph's CTC logits 0.51 (its K/V sums
# 5e-3 relative), the float decoder's outputs on the int8 visual K/V 0.42 (its logits). Step 17180 (0.4.0): 0.58 and
# 1.00 (a step's logits) with VNNI; 1.68 for the CTC logits on an AVX2-only CPU, whose 16-bit sums saturated. With
# 7-bit weights (0.5.1): 0.91 and 1.44 on that CPU, where no sum saturates, so on any x86 CPU alike.
# The greedy texts must match exactly.
TOLERANCE = {"vision": 1.5, "decoder": 2.0}
CALIB_SEED = 31337  # not the held-out seed (987654) nor export's golden seed (4242)


def calibration_lines(n: int, pool_dir: str | None = None, share: float = 0.0):
    from render import FontBank
    from textgen import TextSource

    rng = random.Random(CALIB_SEED)
    np.random.seed(CALIB_SEED)
    src, bank = TextSource(CALIB_SEED), FontBank()
    pool = None
    if pool_dir:
        from pdf_lines import PdfLinePool
        pool = PdfLinePool(pool_dir)
    samples = [make_sample(src, bank, rng, 120, pdf_pool=pool, pdf_share=share) for _ in range(n)]
    samples.sort(key=lambda s: s[0].shape[1])
    return samples


def sample_of(t: torch.Tensor, seed: int, k: int = 20000) -> np.ndarray:
    x = t.detach().reshape(-1).numpy()
    return np.random.default_rng(seed).choice(x, size=min(x.size, k), replace=False) if x.size else x


def calibrate(ckpt: str, n: int, percentile: float, batch: int = 16, pool_dir: str | None = None, share: float = 0.0):
    """On n synthetic lines, through the whole vision pass: each stem block's ReLU range (its output feeds the
    next conv) and the input range of every linear layer (what a matrix product with a constant weight reads).
    Returns (ReLU tops per block, [(weight [K,N] as the ONNX graph holds it, lo, hi)] per linear layer)."""
    model, _ = load_model(ckpt)
    samples = calibration_lines(n, pool_dir, share)
    stem_vals: list[list[np.ndarray]] = [[] for _ in model.stem.blocks]
    stem_peaks = [0.0] * len(model.stem.blocks)
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    lin_vals: list[list[np.ndarray]] = [[] for _ in linears]
    lin_ext = [[np.inf, -np.inf] for _ in linears]

    def stem_hook(i):
        def f(_m, _inp, out):
            pos = out[out > 0]
            if pos.numel():
                stem_peaks[i] = max(stem_peaks[i], float(pos.max()))
                stem_vals[i].append(sample_of(pos, i))
        return f

    def lin_hook(i):
        def f(_m, inp, _out):
            x = inp[0]
            lin_ext[i][0] = min(lin_ext[i][0], float(x.min()))
            lin_ext[i][1] = max(lin_ext[i][1], float(x.max()))
            lin_vals[i].append(sample_of(x, 100 + i))
        return f

    handles = [blk[2].register_forward_hook(stem_hook(i)) for i, blk in enumerate(model.stem.blocks)]
    handles += [m.register_forward_hook(lin_hook(i)) for i, m in enumerate(linears)]
    with torch.no_grad():
        for i in range(0, n, batch):
            b = collate(samples[i:i + batch])
            model.vision(b["pixels"], b["widths"])
    for h in handles:
        h.remove()
    pct = lambda vals, q, fallback: float(np.percentile(np.concatenate(vals), q)) if vals and percentile < 100 else fallback
    # A high percentile: the rare larger values clip, the rest keep a finer step.
    tops = [pct(v, percentile, p) for v, p in zip(stem_vals, stem_peaks)]
    ranges = [(m.weight.detach().numpy().T, pct(v, 100 - percentile, e[0]), pct(v, percentile, e[1]))
              for m, v, e in zip(linears, lin_vals, lin_ext) if v]
    return tops, ranges


class Graph:
    def __init__(self, model: onnx.ModelProto):
        self.m = model
        self.g = model.graph
        self.inits = {i.name: i for i in self.g.initializer}
        self.consts = {}
        for n in self.g.node:
            if n.op_type == "Constant":
                self.consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.new_inits: list[TensorProto] = []

    def weight(self, name: str):
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name])
        return self.consts.get(name)

    def add_init(self, name: str, arr: np.ndarray) -> str:
        self.new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def finish(self):
        used = {x for n in self.g.node for x in n.input}
        keep = [i for i in self.g.initializer if i.name in used]
        del self.g.initializer[:]
        self.g.initializer.extend(keep + [i for i in self.new_inits if i.name in used])


# Weights use 7 of int8's bits (-63..63). CPUs without VNNI (AVX2 alone) multiply uint8 by int8 with VPMADDUBSW,
# which adds two products in 16 bits: 2 x 255 x 127 overflows it and saturates, 2 x 255 x 63 does not. With 7-bit
# weights every x86 CPU computes the same sums, so the accuracy measured on one holds on all.
WEIGHT_BITS = 7


def int8_per_channel(w: np.ndarray, axis: int, bits: int = WEIGHT_BITS) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights of `bits` bits with one scale per output channel (`axis` indexes the channels):
    (int8, scales)."""
    top = 2 ** (bits - 1) - 1
    reduce = tuple(a for a in range(w.ndim) if a != axis)
    scales = np.maximum(np.abs(w).max(axis=reduce), 1e-8) / top
    shape = [1] * w.ndim
    shape[axis] = -1
    return np.clip(np.round(w / scales.reshape(shape)), -top, top).astype(np.int8), scales.astype(np.float32)


def quantize_convs(gr: Graph, scales: list[float]):
    """Static QDQ through the stem: pixels, and each block's ReLU, column mask and max pool as uint8 at the
    block's calibrated scale (a 0/1 mask and a max pool keep the ReLU's range, so one scale covers the chain
    from one conv to the next); weights int8 per output channel, biases int32. onnxruntime then runs
    QLinearConv (the ReLU dropped: its Q has zero point 0, so it clips), QLinearMul and a uint8 MaxPool,
    with no float tensor between two convs."""
    g = gr.g
    convs = [n for n in g.node if n.op_type == "Conv"]
    if len(convs) != len(scales):
        raise SystemExit(f"{len(convs)} convs in the graph but {len(scales)} calibrated blocks")
    consumers: dict[str, list] = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    after: dict[str, list] = {}  # tensor -> Q, DQ nodes to put right after its producer (or first, for inputs)
    dequantised: dict[str, str] = {}

    def qdq(tensor: str, scale: float, tag: str) -> str:
        """tensor -> Q -> DQ, every consumer rewired to the DQ; returns the dequantised tensor's name."""
        if tensor in dequantised:
            return dequantised[tensor]
        if tensor in dequantised.values():  # already the output of one of ours
            return tensor
        s = gr.add_init(f"{tag}_scale", np.array(scale, dtype=np.float32))
        z = gr.add_init(f"{tag}_zp", np.array(0, dtype=np.uint8))
        out = f"{tag}_dq"
        for c in consumers.get(tensor, []):
            for j, inp in enumerate(c.input):
                if inp == tensor:
                    # A Shape reads the uint8 tensor: reading the float one would keep a DQ alive for nothing.
                    c.input[j] = f"{tag}_q" if c.op_type == "Shape" else out
        after[tensor] = [helper.make_node("QuantizeLinear", [tensor, s, z], [f"{tag}_q"], name=f"{tag}_Q"),
                         helper.make_node("DequantizeLinear", [f"{tag}_q", s, z], [out], name=f"{tag}_DQ")]
        dequantised[tensor] = out
        return out

    only = lambda t, op: [c for c in consumers.get(t, []) if c.op_type == op]
    scale_in = 1.0 / 255  # pixels are in [0, 1] (preprocess.ts)
    for i, conv in enumerate(convs):
        x = qdq(conv.input[0], scale_in, f"qconv{i}_in")
        w = gr.weight(conv.input[1]).astype(np.float32)
        b = gr.weight(conv.input[2]).astype(np.float32)
        wq, ws = int8_per_channel(w, axis=0)
        bq = np.round(b / (ws * scale_in)).astype(np.int32)
        wn = gr.add_init(f"qconv{i}_w", wq)
        wsn = gr.add_init(f"qconv{i}_w_scale", ws)
        wzn = gr.add_init(f"qconv{i}_w_zp", np.zeros(w.shape[0], dtype=np.int8))
        bn = gr.add_init(f"qconv{i}_b", bq)
        bsn = gr.add_init(f"qconv{i}_b_scale", (ws * scale_in).astype(np.float32))
        bzn = gr.add_init(f"qconv{i}_b_zp", np.zeros(w.shape[0], dtype=np.int32))
        after.setdefault(f"qconv{i}:weights", []).extend([
            helper.make_node("DequantizeLinear", [wn, wsn, wzn], [f"qconv{i}_w_dq"], name=f"qconv{i}_w_DQ", axis=0),
            helper.make_node("DequantizeLinear", [bn, bsn, bzn], [f"qconv{i}_b_dq"], name=f"qconv{i}_b_DQ", axis=0)])
        conv.input[0], conv.input[1], conv.input[2] = x, f"qconv{i}_w_dq", f"qconv{i}_b_dq"
        relu = consumers[conv.output[0]][0]
        if relu.op_type != "Relu":
            raise SystemExit(f"conv {i} is followed by {relu.op_type}, not Relu")
        scale = scales[i] / 255
        t = relu.output[0]
        qdq(t, scale, f"qconv{i}_relu")
        # On to the next conv: the block's max pool and column mask, in either order (model.py pools first since
        # the pool-first graph; older graphs mask first). Consumers are indexed by the tensors' names before rewiring.
        while nxt := only(t, "MaxPool") + only(t, "Mul"):
            n = nxt[0]
            if n.op_type == "Mul":
                mask = [m for m in n.input if m != dequantised[t]][0]
                qdq(mask, 1.0, f"qconv{i}_mask")  # 0/1: exact at scale 1
                t = n.output[0]
                qdq(t, scale, f"qconv{i}_masked")
            else:
                t = n.output[0]
                qdq(t, scale, f"qconv{i}_pool")
        scale_in = scale
    nodes = []
    for key in [k for k in after if k.endswith(":weights")]:
        nodes.extend(after.pop(key))
    for inp in g.input:
        nodes.extend(after.pop(inp.name, []))
    for n in g.node:
        nodes.append(n)
        for o in n.output:
            nodes.extend(after.pop(o, []))
    if after:
        raise SystemExit(f"QDQ for tensors with no producer: {list(after)}")
    del g.node[:]
    g.node.extend(nodes)


def quantize_matmuls(gr: Graph, ranges, tag: str) -> int:
    """Every MatMul whose constant [K, N] weight is a calibrated linear layer's: its input as uint8 at the
    calibrated range (fixed, so a line's result never depends on the other lines in its batch), the weight
    int8 per output column; onnxruntime runs it as MatMulIntegerToFloat (the output stays float)."""
    g = gr.g
    nodes = []
    count = 0
    for n in g.node:
        w = gr.weight(n.input[1]) if n.op_type == "MatMul" else None
        match = None
        if w is not None and w.ndim == 2:
            match = next((r for r in ranges if r[0].shape == w.shape and np.array_equal(r[0], w)), None)
        if match is None:
            nodes.append(n)
            continue
        count += 1
        k = f"{tag}{count}"
        lo, hi = min(match[1], 0.0), max(match[2], 0.0)
        scale = max(hi - lo, 1e-8) / 255
        zp = int(np.clip(round(-lo / scale), 0, 255))
        s = gr.add_init(f"{k}_x_scale", np.array(scale, dtype=np.float32))
        z = gr.add_init(f"{k}_x_zp", np.array(zp, dtype=np.uint8))
        wq, ws = int8_per_channel(w, axis=1)  # [K, N]: one scale per output column
        wn = gr.add_init(f"{k}_w", wq)
        wsn = gr.add_init(f"{k}_w_scale", ws)
        wz = gr.add_init(f"{k}_w_zp", np.zeros(w.shape[1], dtype=np.int8))
        nodes.append(helper.make_node("QuantizeLinear", [n.input[0], s, z], [f"{k}_xq"], name=f"{k}_Q"))
        nodes.append(helper.make_node("DequantizeLinear", [f"{k}_xq", s, z], [f"{k}_xdq"], name=f"{k}_DQ"))
        nodes.append(helper.make_node("DequantizeLinear", [wn, wsn, wz], [f"{k}_wdq"], name=f"{k}_wDQ", axis=1))
        n.input[0], n.input[1] = f"{k}_xdq", f"{k}_wdq"
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    return count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--ckpt", required=True, help="the checkpoint the bundle was exported from (for calibration)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--lines", type=int, default=1024, help="synthetic lines to calibrate on")
    ap.add_argument("--percentile", type=float, default=99.99,
                    help="each activation's range ends at this percentile of its calibrated values (100: the extremes)")
    ap.add_argument("--pool", help="a crop pool (pdf_lines.py's format: formula.py's formula crops) to draw a share of the calibration from")
    ap.add_argument("--pool-share", type=float, default=0.6, help="the share of calibration samples drawn from --pool")
    ap.add_argument("--install", action="store_true", help="copy the int8 vision graph into --bundle and record it in its config.json")
    args = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    cfg = json.load(open(os.path.join(args.bundle, "config.json")))
    if cfg.get("region"):
        raise SystemExit("region bundles are not quantised yet (their vision graph takes line indices)")
    src = os.path.join(args.bundle, cfg["files"]["vision"]["path"])
    gr = Graph(onnx.load(src))
    tops, ranges = calibrate(args.ckpt, args.lines, args.percentile, pool_dir=args.pool, share=args.pool_share if args.pool else 0.0)
    quantize_convs(gr, tops)
    matmuls = quantize_matmuls(gr, ranges, "qvmm")
    if matmuls != len(ranges):
        raise SystemExit(f"{len(ranges)} calibrated linear layers but {matmuls} matched a MatMul of the graph")
    gr.finish()
    onnx.checker.check_model(gr.m)
    onnx.save(gr.m, os.path.join(args.out, "vision.onnx"))
    # Faster kernels for the same numbers (vision_rewrite.py: checked bit for bit against the graph just saved). An
    # optimisation only: a graph it does not fit (an older stem, no node here) is kept as quantised.
    try:
        rewrites = rewrite_file(os.path.join(args.out, "vision.onnx"), cfg["image"]["widthMultiple"])
    except (ValueError, OSError, subprocess.CalledProcessError) as e:
        print(f"vision graph kept as quantised, not rewritten: {e}", flush=True)
        rewrites = []
    source = "training/render.py synthetic lines"
    if args.pool:
        source += f", {args.pool_share:.0%} drawn from the crop pool {os.path.basename(os.path.normpath(args.pool))}"
    report = {"calibration": {"lines": args.lines, "seed": CALIB_SEED, "percentile": args.percentile, "source": source},
              "vision": {"convs": len(tops), "convReluTops": [round(t, 4) for t in tops], "matmuls": matmuls,
                         "weightBits": WEIGHT_BITS}, "rewrites": rewrites}
    json.dump(report, open(os.path.join(args.out, "quantize.json"), "w"), indent=2)
    print(json.dumps(report), flush=True)
    if args.install:
        install(args.bundle, args.out, report)


def sha256(path: str) -> str:
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def install(bundle: str, out: str, report: dict):
    """Copy OUT's int8 vision graph into the bundle as vision.int8.onnx and record it (hash, calibration,
    tolerance) in its config.json. The float graph stays: `--precision fp32` reads it."""
    import shutil
    path = os.path.join(bundle, "config.json")
    cfg = json.load(open(path))
    shutil.copyfile(os.path.join(out, "vision.onnx"), os.path.join(bundle, "vision.int8.onnx"))
    cfg["files"]["visionInt8"] = {"path": "vision.int8.onnx", "sha256": sha256(os.path.join(bundle, "vision.int8.onnx"))}
    cfg["int8"] = {"tolerance": TOLERANCE, **report}
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"installed into {bundle}: check it with `npx specula check-bundle {bundle}`")


if __name__ == "__main__":
    main()
