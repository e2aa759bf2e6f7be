"""Multi-line regions for region bundles: synthetic regions, their batches, and greedy decoding through the
decoder contract.

A region is read as one sequence: BOS line1 BOS line2 ... BOS lineK EOS. Each line's crop goes through the
vision pass on its own (with its line index), the decoder attends to all lines' visual tokens at once, and a
text position is line * max_text + index within the line, so every line reuses what the line model learnt.
"""
import random

import numpy as np
import torch
from torch.utils.data import IterableDataset

import charset
from data import worker_sources
from model import NEG, OCRModel
from render import RESAMPLERS, FontBank, normalise, render_line
from textgen import TextSource


def make_region(src: TextSource, bank: FontBank, rng: random.Random, max_lines: int, max_chars: int):
    """1..max_lines lines set in one face and size, as a block of a page: half of them a word-wrapped paragraph
    (lines of about one length), half independent lines. Lines that look alike are what real paragraphs are,
    and they make the model tell lines apart by their line embedding rather than by their look."""
    n = rng.randint(1, max_lines)
    if rng.random() < 0.5:
        texts = src.paragraph(n, rng.randint(max(12, max_chars // 3), max_chars))
    else:
        texts = [src.line(max_chars) for _ in range(n)]
    face, size = bank.pick(rng), rng.randint(14, 48)
    resample = rng.choice(RESAMPLERS)
    out = []
    for j, t in enumerate(texts):
        other = texts[j + 1] if j + 1 < len(texts) else src.line(80)
        img, t = render_line(t, other, bank, rng, face=face, size=size)
        out.append((normalise(img, resample), t))
    return out


def region_ids(texts: list[str], max_text: int):
    """Line texts -> (input tokens, targets, positions) of one region sequence."""
    tin, tgt, pos = [], [], []
    for j, t in enumerate(texts):
        ids = charset.encode(t)[: max_text - 2]
        tin += [charset.BOS] + ids
        pos += [j * max_text + i for i in range(len(ids) + 1)]
        tgt += ids + [charset.BOS if j + 1 < len(texts) else charset.EOS]
    return tin, tgt, pos


def collate_regions(regions, max_text: int):
    """regions (lists of (pixels [32,W], text)) -> pixels [B*K,1,32,W] (K: the most lines in a region; rows
    past a region's own lines have width 0), widths, lines [B*K], tokens/targets/positions [B,T], line_texts."""
    k = max(len(r) for r in regions)
    wmax = max(x.shape[1] for r in regions for x, _ in r)
    b = len(regions)
    pix = np.zeros((b * k, 1, 32, wmax), dtype=np.float32)
    widths = np.zeros(b * k, dtype=np.int64)
    lines = np.tile(np.arange(k, dtype=np.int64), b)
    seqs = [region_ids([t for _, t in r], max_text) for r in regions]
    tmax = max(len(s[0]) for s in seqs)
    tin = np.full((b, tmax), charset.PAD, dtype=np.int64)
    tgt = np.full((b, tmax), charset.PAD, dtype=np.int64)
    pos = np.zeros((b, tmax), dtype=np.int64)
    for i, (r, (a, t, p)) in enumerate(zip(regions, seqs)):
        for j, (x, _) in enumerate(r):
            pix[i * k + j, 0, :, : x.shape[1]] = x
            widths[i * k + j] = x.shape[1]
        tin[i, : len(a)], tgt[i, : len(t)], pos[i, : len(p)] = a, t, p
    return {"pixels": torch.from_numpy(pix), "widths": torch.from_numpy(widths), "lines": torch.from_numpy(lines),
            "tokens": torch.from_numpy(tin), "targets": torch.from_numpy(tgt), "positions": torch.from_numpy(pos),
            "line_texts": [[t for _, t in r] for r in regions], "k": k}


class RegionBatches(IterableDataset):
    """Endless batches of regions, bucketed by line count and width; the budget counts every line's padded width."""

    def __init__(self, seed: int, max_lines: int, max_chars: int, max_text: int, pixel_budget: int, pool: int = 192):
        self.seed, self.max_lines, self.max_chars, self.max_text = seed, max_lines, max_chars, max_text
        self.pixel_budget, self.pool = pixel_budget, pool

    def __iter__(self):
        rng, src, bank = worker_sources(self.seed)
        while True:
            regions = [make_region(src, bank, rng, self.max_lines, self.max_chars) for _ in range(self.pool)]
            regions.sort(key=lambda r: (len(r), max(x.shape[1] for x, _ in r)))
            batches, cur = [], []
            for r in regions:
                cost = (len(cur) + 1) * max(len(r), *(len(c) for c in cur), 1) * max(
                    x.shape[1] for c in cur + [r] for x, _ in c)
                if cur and cost > self.pixel_budget:
                    batches.append(cur)
                    cur = []
                cur.append(r)
            if cur:
                batches.append(cur)
            rng.shuffle(batches)
            for bt in batches:
                yield collate_regions(bt, self.max_text)


def held_out_regions(n: int = 60, seed: int = 424242, max_lines: int = 6, max_chars: int = 80):
    """Fixed synthetic regions never drawn by training (their own seed)."""
    rng = random.Random(seed)
    np.random.seed(seed)
    src, bank = TextSource(seed), FontBank()
    return [make_region(src, bank, rng, max_lines, max_chars) for _ in range(n)]


def region_visual(model: OCRModel, b: dict):
    """The vision pass over every line of a batch of regions, its K/V laid out per region: [L,B,H,K*V,dh] x2,
    the visual mask [B,K*V], and the per-line CTC logits [B*K,V,vocab] with their mask."""
    vk, vv, ctc, vm = model.vision(b["pixels"], b["widths"], b["lines"])
    L, bk, H, V, dh = vk.shape
    k = b["k"]
    nb = bk // k
    def per_region(t):
        return t.reshape(L, nb, k, H, V, dh).permute(0, 1, 3, 2, 4, 5).reshape(L, nb, H, k * V, dh)
    return per_region(vk), per_region(vv), vm.reshape(nb, k * V), ctc, vm


def causal_bias(b: int, t: int, device):
    allow = torch.tril(torch.ones(t, t, dtype=torch.bool, device=device))
    return torch.where(allow, 0.0, NEG)[None].expand(b, t, t)


def next_position(prev: torch.Tensor, tok: torch.Tensor, max_text: int):
    """The position of `tok` when the token before it sits at `prev`: a BOS opens the next line at its index 0."""
    line = torch.div(prev, max_text, rounding_mode="floor")
    return torch.where(tok == charset.BOS, (line + 1) * max_text, prev + 1)


@torch.no_grad()
def greedy_regions(model: OCRModel, b: dict, max_len: int):
    """Greedy decoding of regions through the decoder contract, held to each region's line count as the engine
    holds it; returns each region's lines."""
    vk, vv, vm, _, _ = region_visual(model, b)
    nb = vm.shape[0]
    L, _, H, _, dh = vk.shape
    limit = vm.sum(1).long() + 4 * b["k"]
    dev = vk.device
    cache_k = torch.zeros(L, nb, H, max_len + 1, dh, device=dev)
    cache_v = torch.zeros_like(cache_k)
    tok = torch.full((nb, 1), charset.BOS, dtype=torch.long, device=dev)
    pos = torch.zeros((nb, 1), dtype=torch.long, device=dev)
    out = torch.zeros(nb, max_len, dtype=torch.long, device=dev)
    done = torch.zeros(nb, dtype=torch.bool, device=dev)
    mt = model.cfg.max_text
    n_lines = torch.tensor([len(t) for t in b["line_texts"]], device=dev)
    for step in range(max_len):
        slots = torch.arange(max_len + 1, device=dev)
        cb = torch.where(slots < step, 0.0, NEG)[None, None, :].expand(nb, 1, max_len + 1)
        bias = torch.cat([cb, torch.zeros(nb, 1, 1, device=dev)], dim=-1)
        logits, _, nk, nv, _ = model.decode(tok, pos, cache_k, cache_v, vk, vv, vm, bias)
        cache_k[:, :, :, step] = nk[:, :, :, 0]
        cache_v[:, :, :, step] = nv[:, :, :, 0]
        # A region's line count is known (the engine's rule, positions.ts): no EOS before its last line, no line
        # break on it.
        lg = logits[:, -1].clone()
        on_last = torch.div(pos[:, 0], mt, rounding_mode="floor") >= n_lines - 1
        lg[on_last, charset.BOS] = NEG
        lg[~on_last, charset.EOS] = NEG
        nxt = lg.argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, charset.EOS), nxt)
        out[:, step] = nxt
        done |= (nxt == charset.EOS) | (step + 1 >= limit)
        tok = nxt[:, None]
        pos = next_position(pos, tok, mt)
        if bool(done.all()):
            break
    return [split_lines(row) for row in out.tolist()]


def split_lines(ids) -> list[str]:
    lines, cur = [], []
    for i in ids:
        if i == charset.EOS:
            break
        if i == charset.BOS:
            lines.append(charset.decode(cur))
            cur = []
        else:
            cur.append(i)
    lines.append(charset.decode(cur))
    return lines
