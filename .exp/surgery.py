"""Decoder graph: per-layer visual/cache K/V inputs (no Gather->Split copies), and attention over (vis, cache, new)
without concatenating the keys and values (scores concatenated instead, probabilities sliced)."""
import sys
import onnx
from onnx import helper, TensorProto, numpy_helper
import numpy as np

src, dst, split_attn = sys.argv[1], sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == 'attn'
m = onnx.load(src)
g = m.graph
consts = {}
for n in g.node:
    if n.op_type == 'Constant':
        consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
for t in g.initializer:
    consts[t.name] = numpy_helper.to_array(t)
inputs = {i.name: i for i in g.input}
L = 4
rename = {}  # gather output -> new input name
drop = set()
for n in g.node:
    if n.op_type == 'Gather' and n.input[0] in ('vis_k', 'vis_v', 'cache_k', 'cache_v'):
        idx = int(consts[n.input[1]])
        rename[n.output[0]] = f'{n.input[0]}_{idx}'
        drop.add(n.name)
nodes = [onnx.NodeProto.FromString(n.SerializeToString()) for n in g.node if n.name not in drop]
shape_fix = {}
for n in nodes:
    if n.op_type == 'Shape' and n.input[0] in ('vis_k', 'vis_v', 'cache_k', 'cache_v'):
        n.input[0] = n.input[0] + '_0'
        shape_fix[n.output[0]] = True
fixes = []
for n in nodes:
    for j, x in enumerate(n.input):
        if x in rename:
            n.input[j] = rename[x]
    if n.op_type == 'Gather' and n.input[0] in shape_fix:
        idx = int(consts[n.input[1]])
        c = n.name + '/index'
        fixes.append(helper.make_node('Constant', [], [c], value=numpy_helper.from_array(np.array(idx - 1, dtype=np.int64)), name=c))
        n.input[1] = c
nodes = fixes + nodes
new_inputs = []
for i in g.input:
    if i.name in ('vis_k', 'vis_v', 'cache_k', 'cache_v'):
        dims = i.type.tensor_type.shape.dim
        for l in range(L):
            vi = helper.make_tensor_value_info(f'{i.name}_{l}', TensorProto.FLOAT, [d.dim_param or d.dim_value for d in dims][1:])
            new_inputs.append(vi)
    else:
        new_inputs.append(i)
if split_attn:
    out = []
    prod = {o: n for n in nodes for o in n.output}
    users = {}
    for n in nodes:
        for x in n.input:
            users.setdefault(x, []).append(n)
    replaced = set()
    extra = []
    for n in nodes:
        if n.op_type == 'Concat' and len(n.input) == 3 and n.input[0].startswith(('vis_k_', 'vis_v_')):
            pass
    # keys: Concat(vis_k_l, cache_k_l, k) -> Transpose(0,1,3,2) -> MatMul(q, .)
    for n in nodes:
        if n.op_type == 'Concat' and len(n.input) == 3 and n.input[0].startswith('vis_k_'):
            tr = users[n.output[0]]
            assert len(tr) == 1 and tr[0].op_type == 'Transpose'
            mm = users[tr[0].output[0]]
            assert len(mm) == 1 and mm[0].op_type == 'MatMul'
            q = mm[0].input[0]
            parts = []
            for j, kin in enumerate(n.input):
                t_out = f'{n.name}/T{j}'
                s_out = f'{n.name}/S{j}'
                extra.append(helper.make_node('Transpose', [kin], [t_out], perm=[0, 1, 3, 2], name=t_out))
                extra.append(helper.make_node('MatMul', [q, t_out], [s_out], name=s_out))
                parts.append(s_out)
            extra.append(helper.make_node('Concat', parts, [mm[0].output[0]], axis=-1, name=f'{n.name}/scores'))
            replaced.update({n.name, tr[0].name, mm[0].name})
        if n.op_type == 'Concat' and len(n.input) == 3 and n.input[0].startswith('vis_v_'):
            mm = users[n.output[0]]
            assert len(mm) == 1 and mm[0].op_type == 'MatMul'
            p = mm[0].input[0]
            # slice bounds from the parts' key counts (dim 2)
            bounds = []
            for j, vin in enumerate(n.input):
                sh = f'{n.name}/shape{j}'
                extra.append(helper.make_node('Shape', [vin], [sh], start=2, end=3, name=sh))
                bounds.append(sh)
            zero = f'{n.name}/zero'
            extra.append(helper.make_node('Constant', [], [zero], value=numpy_helper.from_array(np.array([0], dtype=np.int64)), name=zero))
            axis = f'{n.name}/axis'
            extra.append(helper.make_node('Constant', [], [axis], value=numpy_helper.from_array(np.array([3], dtype=np.int64)), name=axis))
            e1 = bounds[0]
            e2 = f'{n.name}/e2'
            extra.append(helper.make_node('Add', [bounds[0], bounds[1]], [e2], name=e2))
            e3 = f'{n.name}/e3'
            extra.append(helper.make_node('Add', [e2, bounds[2]], [e3], name=e3))
            spans = [(zero, e1), (e1, e2), (e2, e3)]
            partial = []
            for j, ((a, b), vin) in enumerate(zip(spans, n.input)):
                ps = f'{n.name}/P{j}'
                extra.append(helper.make_node('Slice', [p, a, b, axis], [ps], name=ps))
                o = f'{n.name}/O{j}'
                extra.append(helper.make_node('MatMul', [ps, vin], [o], name=o))
                partial.append(o)
            s01 = f'{n.name}/O01'
            extra.append(helper.make_node('Add', [partial[0], partial[1]], [s01], name=s01))
            extra.append(helper.make_node('Add', [s01, partial[2]], [mm[0].output[0]], name=f'{n.name}/sum'))
            replaced.update({n.name, mm[0].name})
    kept = [n for n in nodes if n.name not in replaced]
    # keep topological order: insert extras before the first user of their outputs; simplest: append and sort
    nodes = kept + extra
    # topological sort
    avail = set(x.name for x in new_inputs) | set(t.name for t in g.initializer) | {''}
    ordered, pending = [], list(nodes)
    while pending:
        rest = []
        for n in pending:
            if all(x in avail for x in n.input):
                ordered.append(n); avail.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise SystemExit(f'cycle or missing input: {[ (n.name, [x for x in n.input if x not in avail]) for n in rest[:3]]}')
        pending = rest
    nodes = ordered
del g.node[:]
g.node.extend(nodes)
del g.input[:]
g.input.extend(new_inputs)
# shape info of removed values is stale
del g.value_info[:]
onnx.checker.check_model(m)
onnx.save(m, dst)
print('saved', dst, len(g.node), 'nodes', [i.name for i in g.input])
