"""The CTC head's log-probabilities and each row's mean distribution as outputs of a vision graph, in place of its
logits: `ctc_logp` [B, V, vocab] (log-softmax over the vocabulary, every frame) and `ctc_mean` [B, vocab] (the mean
of the softmax over each row's real frames: the script gate's input). The engine took both in JavaScript, one exp
per frame and character, a twelfth of the vision worker's time on docbank pages; onnxruntime's vectorised kernels
take a fraction of that. Nothing else in the graph changes, so the visual K/V stay bit for bit what they were, and
the engine still reads a graph that gives logits (golden.json keeps the head's logits: the check normalises them).

export.py writes every new vision graph through `with_ctc_outputs`; for a bundle exported before, this rewrites its
vision graphs in place (vision.onnx and vision.int8.onnx where it has one) and their hashes in config.json:

    /usr/bin/python3 training/ctc_outputs.py models/specula-line-base [more bundles]
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

LOGITS, LOGP, MEAN, MASK = "ctc_logits", "ctc_logp", "ctc_mean", "vis_mask"


def has_ctc_outputs(model: onnx.ModelProto) -> bool:
    return any(o.name == LOGP for o in model.graph.output)


def with_ctc_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (a vision graph with outputs ctc_logits [B,V,C] and vis_mask [B,V]) with ctc_logp and ctc_mean in
    place of ctc_logits. Opset 13+ (ReduceSum takes its axes as an input)."""
    g = model.graph
    outs = {o.name: o for o in g.output}
    if LOGITS not in outs or MASK not in outs:
        raise ValueError(f"a vision graph gives {LOGITS} and {MASK}; this one gives {sorted(outs)}")
    logits = outs[LOGITS]
    vocab = logits.type.tensor_type.shape.dim[2]
    g.initializer.extend([
        numpy_helper.from_array(np.array([1], np.int64), "ctc_axis_frames"),
        numpy_helper.from_array(np.array([-1], np.int64), "ctc_axis_last"),
        numpy_helper.from_array(np.array(1.0, np.float32), "ctc_one"),
    ])
    g.node.extend([
        helper.make_node("LogSoftmax", [LOGITS], [LOGP], axis=-1, name="ctc_logsoftmax"),
        # Mean over a row's real frames: padding frames are masked out, and a row of none divides by 1.
        helper.make_node("Exp", [LOGP], ["ctc_p"], name="ctc_exp"),
        helper.make_node("Unsqueeze", [MASK, "ctc_axis_last"], ["ctc_mask3"], name="ctc_mask3"),
        helper.make_node("Mul", ["ctc_p", "ctc_mask3"], ["ctc_p_real"], name="ctc_mask_frames"),
        helper.make_node("ReduceSum", ["ctc_p_real", "ctc_axis_frames"], ["ctc_p_sum"], keepdims=0, name="ctc_sum"),
        helper.make_node("ReduceSum", [MASK, "ctc_axis_frames"], ["ctc_frames"], keepdims=1, name="ctc_count"),
        helper.make_node("Max", ["ctc_frames", "ctc_one"], ["ctc_frames1"], name="ctc_count1"),
        helper.make_node("Div", ["ctc_p_sum", "ctc_frames1"], [MEAN], name="ctc_mean"),
    ])
    batch = logits.type.tensor_type.shape.dim[0]
    logp = helper.make_tensor_value_info(LOGP, logits.type.tensor_type.elem_type, None)
    logp.type.tensor_type.shape.CopyFrom(logits.type.tensor_type.shape)
    mean = helper.make_tensor_value_info(MEAN, logits.type.tensor_type.elem_type, None)
    mean.type.tensor_type.shape.dim.add().CopyFrom(batch)
    mean.type.tensor_type.shape.dim.add().CopyFrom(vocab)
    kept = [o for o in g.output if o.name != LOGITS]
    at = [o.name for o in g.output].index(LOGITS)
    del g.output[:]
    g.output.extend(kept[:at] + [logp, mean] + kept[at:])
    onnx.checker.check_model(model)
    return model


def rewrite_bundle(bundle: str) -> None:
    from export import sha256  # here, not at the top: export.py imports this module
    path = os.path.join(bundle, "config.json")
    cfg = json.load(open(path))
    for key in ("vision", "visionInt8"):
        entry = cfg["files"].get(key)
        if not entry:
            continue
        file = os.path.join(bundle, entry["path"])
        model = onnx.load(file)
        if has_ctc_outputs(model):
            print(f"{file}: has {LOGP} already")
            continue
        onnx.save(with_ctc_outputs(model), file)
        entry["sha256"] = sha256(file)
        print(f"{file}: {LOGITS} -> {LOGP}, {MEAN}")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundles", nargs="+")
    for b in ap.parse_args().bundles:
        rewrite_bundle(b)


if __name__ == "__main__":
    main()
