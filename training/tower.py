"""A vision tower started from its teacher (distill_vision.py): the teacher's layers copied, each feed-forward block
cut to the student's width by keeping the hidden units that carry the most of it on real lines (the mean absolute
activation times the norm of the unit's output weights, measured through the teacher's own vision pass), and the
teacher's final norm as the tower's. With the teacher's width nothing is cut: the tower starts as the teacher.
"""
import random

import numpy as np
import torch

from data import collate, make_sample
from render import FontBank
from textgen import TextSource

PRUNE_SEED = 5150  # neither the held-out seed (987654), export's golden seed (4242) nor calibration's (31337)


@torch.no_grad()
def unit_importance(teacher, lines: int = 96, batch: int = 16):
    """Per layer, each feed-forward hidden unit's mean |GELU output| over the real visual tokens of `lines`
    synthetic lines, times the norm of its output weights: [n_layers] tensors of [d_ff]."""
    rng = random.Random(PRUNE_SEED)
    np.random.seed(PRUNE_SEED)
    src, bank = TextSource(PRUNE_SEED), FontBank()
    samples = sorted((make_sample(src, bank, rng, 120) for _ in range(lines)), key=lambda s: s[0].shape[1])
    sums = [torch.zeros(layer.ff[0].out_features) for layer in teacher.layers]
    count = 0
    state = {}
    hooks = [layer.ff[1].register_forward_hook(lambda m, i, o, k=k: state.__setitem__(k, o))
             for k, layer in enumerate(teacher.layers)]
    for i in range(0, lines, batch):
        b = collate(samples[i:i + batch])
        _, _, _, mask = teacher.vision(b["pixels"], b["widths"])
        keep = mask.bool()
        for k in range(len(sums)):
            sums[k] += state[k][keep].abs().sum(0)
        count += int(keep.sum())
    for h in hooks:
        h.remove()
    return [s / count * layer.ff[2].weight.norm(dim=0) for s, layer in zip(sums, teacher.layers)]


@torch.no_grad()
def tower_from_teacher(student, teacher):
    """Fill the student's vision tower (student.vision_layers, vision_ln_f) from the teacher's decoder layers."""
    width = student.cfg.vision_d_ff
    importance = unit_importance(teacher) if width < teacher.cfg.d_ff else None
    for k, (dst, src) in enumerate(zip(student.vision_layers, teacher.layers)):
        state = {n: t for n, t in src.state_dict().items() if not n.startswith("ff.")}
        keep = torch.arange(width) if importance is None else importance[k].topk(width).indices.sort().values
        state["ff.0.weight"] = src.ff[0].weight[keep].clone()
        state["ff.0.bias"] = src.ff[0].bias[keep].clone()
        state["ff.2.weight"] = src.ff[2].weight[:, keep].clone()
        state["ff.2.bias"] = src.ff[2].bias.clone()
        dst.load_state_dict(state)
    student.vision_ln_f.load_state_dict(teacher.ln_f.state_dict())
