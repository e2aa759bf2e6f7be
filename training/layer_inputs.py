"""The decoder graph with its visual and cache K/V given per layer (vis_k_0 .. vis_k_{L-1}, and so on) instead of
stacked [L, B, H, S, dh] tensors.

PyTorch exports `vis_k[i]` as a Gather on the stacked input, which onnxruntime turns into a Split that copies the
whole visual and cache K/V (tens of MB at batch 32) on every decoder forward. Given per layer, the engine passes
views of the same stacked buffers and nothing is copied: measured 12% off a batch-32 forward and a third off a
batch-4 one, with outputs bit-identical to the stacked graph's (only where the tensors come from changes).

    /usr/bin/python3 training/layer_inputs.py models/specula-line-base/decoder.onnx [--out PATH]

export.py runs it on every decoder it writes; run it by hand on an older bundle's decoder.onnx, then record the
new sha256 in the bundle's config.json (files.decoder) and run `specula check-bundle`.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

STACKED = ("cache_k", "cache_v", "vis_k", "vis_v")


def split_layer_inputs(model: onnx.ModelProto) -> onnx.ModelProto:
    g = model.graph
    stacked = {i.name: i for i in g.input if i.name in STACKED}
    if not stacked:
        return model  # already per layer
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in g.node if n.op_type == "Constant"}
    consts.update({t.name: numpy_helper.to_array(t) for t in g.initializer})
    layers = stacked["vis_k"].type.tensor_type.shape.dim[0].dim_value
    if not layers:
        raise SystemExit("the stacked inputs' first dimension (layers) is not fixed")
    taken = {}  # a Gather's output -> the per-layer input it becomes
    shapes = set()  # Shape nodes reading a stacked input (the graph reads dimensions off them)
    for n in g.node:
        if n.op_type == "Gather" and n.input[0] in stacked:
            axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
            if axis != 0 or n.input[1] not in consts or consts[n.input[1]].ndim != 0:
                raise SystemExit(f"{n.name}: not a constant layer index on axis 0")
            taken[n.output[0]] = f"{n.input[0]}_{int(consts[n.input[1]])}"
    nodes, fixes = [], []
    for n in g.node:
        if n.op_type == "Gather" and n.output[0] in taken:
            continue
        n = onnx.NodeProto.FromString(n.SerializeToString())
        if n.op_type == "Shape" and n.input[0] in stacked:
            n.input[0] = f"{n.input[0]}_0"
            shapes.add(n.output[0])
        for j, x in enumerate(n.input):
            if x in taken:
                n.input[j] = taken[x]
            elif x in stacked:
                raise SystemExit(f"{n.name} ({n.op_type}) reads {x} whole: cannot split it per layer")
        if n.op_type == "Gather" and n.input[0] in shapes:
            # A dimension read off the stacked shape: one rank less per layer.
            idx = int(consts[n.input[1]])
            if idx == 0:
                raise SystemExit(f"{n.name} reads the layer count")
            c = f"{n.name}/per_layer_index"
            fixes.append(helper.make_node("Constant", [], [c], value=numpy_helper.from_array(np.array(idx - 1, dtype=np.int64)), name=c))
            n.input[1] = c
        nodes.append(n)
    inputs = []
    for i in g.input:
        if i.name not in stacked:
            inputs.append(i)
            continue
        dims = [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim][1:]
        inputs += [helper.make_tensor_value_info(f"{i.name}_{l}", TensorProto.FLOAT, dims) for l in range(layers)]
    used = {x for n in nodes for x in n.input}
    nodes = [n for n in fixes + nodes if n.op_type != "Constant" or n.output[0] in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.input[:]
    g.input.extend(inputs)
    del g.value_info[:]  # shapes of the removed values are stale
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("decoder")
    ap.add_argument("--out")
    args = ap.parse_args()
    model = split_layer_inputs(onnx.load(args.decoder))
    onnx.save(model, args.out or args.decoder)
    print(f"{args.out or args.decoder}: inputs {[i.name for i in model.graph.input]}")


if __name__ == "__main__":
    main()
