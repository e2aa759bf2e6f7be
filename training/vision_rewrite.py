"""Rewrites of the int8 vision graph that onnxruntime runs faster and that compute the same numbers, bit for bit.

    /usr/bin/python3 training/vision_rewrite.py models/specula-line-base models/specula-formula-base

rewrites each bundle's vision.int8.onnx, has onnxruntime (training/same_outputs.mjs) run the old and the new graph on
the same lines (several batch shapes, random widths) and keeps the new one only if every output is identical, then
records it in the bundle's config.json (the file's hash, `int8.rewrites`). quantize.py applies the same rewrites.

The first convolution (one grey channel in, 32 out, 3x3, then a 2x2 max pool) was 11-12% of an int8 vision pass
for 1% of its multiply-adds: with one input channel, each output is a sum of 9 products and the integer kernel spends
its time on setting up and requantizing rows. Read on the page's 2x2 cells instead (SpaceToDepth: 4 channels at
half the height and width), the same convolution is one of 4 channels in and 4 x 32 out, one output channel per
(row phase, column phase, channel): the weights are the old ones placed at the taps each phase reads, zeros
elsewhere, so every integer sum is the same and so is every requantized output. The 2x2 max pool is then the
max over the four phases of each channel (a 1x4 max pool, channels last). onnxruntime's profile of 8 lines of 920
px: the convolution 3.4% of the pass and the phases' max 1.4%, where the convolution and its pool took 12.4%; over
passes of the engine's shapes (runs of up to 1,600 columns), 0.90-0.92x the time of the old graph.

Measured and not kept: each layer's attention as onnxruntime's MultiHeadAttention (also bit for bit the same here):
0.99-1.00x the time of the rewritten pass on an Intel Xeon host with AMX, 1.05x the old graph's on a Zen 5 EPYC in
0.5.3 (README, "Whole pages against tesseract").
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _set(model: onnx.ModelProto, name: str, arr: np.ndarray) -> None:
    inits = model.graph.initializer
    for i, t in enumerate(inits):
        if t.name == name:
            inits[i].CopyFrom(numpy_helper.from_array(arr, name))
            return
    inits.append(numpy_helper.from_array(arr, name))


def phase_weights(w: np.ndarray) -> np.ndarray:
    """[C, 1, 3, 3] weights of a stride-1 3x3 convolution -> [4C, 4, 3, 3] on the 2x2 cells (SpaceToDepth's order:
    input channel dy*2+dx; output channel (py*2+px)*C + c is output pixel (2Y+py, 2X+px) of channel c, DepthToSpace's
    DCR order)."""
    c = w.shape[0]
    out = np.zeros((4, c, 4, 3, 3), dtype=w.dtype)
    for py in range(2):
        for px in range(2):
            for i in (-1, 0, 1):
                for j in (-1, 0, 1):
                    a, dy = divmod(py + i, 2)
                    b, dx = divmod(px + j, 2)
                    out[py * 2 + px, :, dy * 2 + dx, a + 1, b + 1] = w[:, 0, i + 1, j + 1]
    return out.reshape(4 * c, 4, 3, 3)


def first_conv_on_cells(model: onnx.ModelProto, prefix: str = "qconv0") -> onnx.ModelProto:
    """Rewrite the stem's first block (Q -> DQ -> Conv -> Relu -> Q -> DQ -> MaxPool 2x2 -> Q) in place."""
    g = model.graph
    nodes = list(g.node)

    def one(what: str, match) -> onnx.NodeProto:
        found = [n for n in nodes if match(n)]
        if len(found) != 1:
            raise ValueError(f"{prefix}: expected one {what}, found {len(found)} (not quantize.py's first block)")
        return found[0]

    q_in = one("input QuantizeLinear", lambda n: n.name == f"{prefix}_in_Q")
    conv = one("Conv", lambda n: n.op_type == "Conv" and n.input[1] == f"{prefix}_w_dq")
    relu_dq = one("DequantizeLinear after the ReLU", lambda n: n.name == f"{prefix}_relu_DQ")
    pool = one("MaxPool", lambda n: n.op_type == "MaxPool" and n.input[0] == relu_dq.output[0])
    pool_q = one("QuantizeLinear after the pool", lambda n: n.op_type == "QuantizeLinear" and n.input[0] == pool.output[0])
    arr = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer if t.name.startswith(prefix + "_")}
    w = arr[f"{prefix}_w"]
    attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
    pattrs = {a.name: helper.get_attribute_value(a) for a in pool.attribute}
    if (w.shape[1:] != (1, 3, 3) or attrs.get("pads") != [1, 1, 1, 1] or attrs.get("strides", [1, 1]) != [1, 1]
            or attrs.get("group", 1) != 1 or attrs.get("dilations", [1, 1]) != [1, 1] or attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
            or f"{prefix}_b" not in arr):
        raise ValueError(f"{conv.name}: not a 3x3 stride-1 convolution of one channel with a bias")
    if (pattrs.get("kernel_shape") != [2, 2] or pattrs.get("strides") != [2, 2] or any(pattrs.get("pads", [0] * 4))
            or pattrs.get("ceil_mode", 0) or pattrs.get("dilations", [1, 1]) != [1, 1]):
        raise ValueError(f"{pool.name}: not a 2x2 max pool")
    # The pool runs on the integers only if it keeps the scale (onnxruntime's uint8 MaxPool needs that too).
    for k in ("scale", "zp"):
        if not np.array_equal(arr[f"{prefix}_relu_{k}"], arr[f"{prefix}_pool_{k}"]):
            raise ValueError(f"{prefix}: the pool requantizes ({k}); the max over phases would not be exact")
    c = w.shape[0]
    _set(model, f"{prefix}_w", phase_weights(w))
    for k in ("w_scale", "w_zp", "b", "b_scale", "b_zp"):
        _set(model, f"{prefix}_{k}", np.tile(arr[f"{prefix}_{k}"], 4))
    _set(model, f"{prefix}_phase_shape", np.array([0, -1, 4, c], dtype=np.int64))
    height = next(i for i in g.input if i.name == q_in.input[0]).type.tensor_type.shape.dim[2].dim_value
    if not height or height % 2:
        raise ValueError(f"{q_in.input[0]}: the line height must be fixed and even, got {height or 'a variable'}")
    _set(model, f"{prefix}_pooled_shape", np.array([0, 0, height // 2, -1], dtype=np.int64))

    pixels = q_in.input[0]
    cells = f"{prefix}_cells"
    q_in.input[0] = cells
    relu_q = relu_dq.input[0]  # uint8 [B, 4C, H/2, W/2] once onnxruntime fuses the convolution
    pooled = pool_q.output[0]
    new = [
        helper.make_node("SpaceToDepth", [pixels], [cells], name=f"{prefix}_SpaceToDepth", blocksize=2),
        # Channels last, the four phases of a channel are four pixels of a row four wide: a 1x4 max pool (onnxruntime's
        # uint8 one runs channels last, so these transposes cancel its own and the convolution's).
        helper.make_node("Transpose", [relu_q], [f"{prefix}_nhwc"], name=f"{prefix}_ToNhwc", perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", [f"{prefix}_nhwc", f"{prefix}_phase_shape"], [f"{prefix}_phases"], name=f"{prefix}_Phases"),
        helper.make_node("Transpose", [f"{prefix}_phases"], [f"{prefix}_phases_nchw"], name=f"{prefix}_PhasesNchw", perm=[0, 3, 1, 2]),
        helper.make_node("MaxPool", [f"{prefix}_phases_nchw"], [f"{prefix}_phase_max"], name=f"{prefix}_PhaseMax", kernel_shape=[1, 4], strides=[1, 4]),
        helper.make_node("Reshape", [f"{prefix}_phase_max", f"{prefix}_pooled_shape"], [pooled], name=f"{prefix}_Pooled"),
    ]
    drop = {id(relu_dq), id(pool), id(pool_q)}
    kept = [n for n in nodes if id(n) not in drop]
    at = kept.index(q_in)
    kept[at:at] = new[:1]
    at = kept.index(next(n for n in kept if relu_q in n.output)) + 1
    kept[at:at] = new[1:]
    del g.node[:]
    g.node.extend(kept)
    return model


REWRITES = ("first convolution on 2x2 cells",)


def rewrite(model: onnx.ModelProto, width_multiple: int) -> list[str]:
    """Apply every rewrite not yet applied; returns those applied. `width_multiple` is the bundle's
    (config.image.widthMultiple): SpaceToDepth needs an even width, where the old graph's pool took any."""
    done = []
    if not any(n.name == "qconv0_SpaceToDepth" for n in model.graph.node):
        if width_multiple % 2:
            raise ValueError(f"lines are padded to a multiple of {width_multiple} px: the 2x2 cells need an even width")
        first_conv_on_cells(model)
        done.append(REWRITES[0])
    onnx.checker.check_model(model)
    return done


def same_outputs(old: str, new: str) -> None:
    """onnxruntime runs both graphs on the same lines; raises unless every output is identical."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "same_outputs.mjs")
    subprocess.run(["node", script, old, new], check=True)


def rewrite_file(path: str, width_multiple: int) -> list[str]:
    """Rewrite PATH in place, checked against itself before."""
    model = onnx.load(path)
    done = rewrite(model, width_multiple)
    if done:
        tmp = path + ".rewritten"
        onnx.save(model, tmp)
        try:
            same_outputs(path, tmp)
        except BaseException:
            os.unlink(tmp)
            raise
        os.replace(tmp, path)
    return done


def main() -> None:
    for bundle in sys.argv[1:]:
        cfg_path = os.path.join(bundle, "config.json")
        cfg = json.load(open(cfg_path))
        ref = cfg["files"].get("visionInt8")
        if not ref or "int8" not in cfg:
            raise SystemExit(f"{bundle}: no int8 vision graph (files.visionInt8 and int8 in config.json)")
        path = os.path.join(bundle, ref["path"])
        done = rewrite_file(path, cfg["image"]["widthMultiple"])
        ref["sha256"] = hashlib.sha256(open(path, "rb").read()).hexdigest()
        cfg["int8"]["rewrites"] = list(dict.fromkeys([*cfg["int8"].get("rewrites", []), *done]))
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"{bundle}: {', '.join(done) or 'already rewritten'}")


if __name__ == "__main__":
    main()
