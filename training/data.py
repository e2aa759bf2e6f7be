"""Batches of synthetic lines, bucketed by width so that padding stays small."""
import random

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

import charset
from pdf_lines import PdfLinePool
from european import EuropeanText
from receipt import render_receipt_line
from render import RESAMPLERS, FontBank, normalise, render_line
from textgen import TextSource


def make_sample(src: TextSource, bank: FontBank, rng: random.Random, max_chars: int, receipt_share: float = 0.0,
                pdf_pool=None, pdf_share: float = 0.0, euro=None, lang_share: float = 0.0):
    # Drawn only when a share is set: a run without receipts or PDF lines draws exactly the lines it always did.
    if euro is not None and lang_share and rng.random() < lang_share:
        text = euro.line(max_chars)  # European languages beyond Latin-1 (european.py), set in a face that has them
        img, text = render_line(text, euro.line(80), bank, rng, face=bank.pick_for(text, rng))
    elif receipt_share and rng.random() < receipt_share:
        img, text = render_receipt_line(src, bank, rng)
    elif pdf_pool is not None and pdf_share and rng.random() < pdf_share:
        img, text = pdf_pool.draw(rng)  # a typeset line from a real PDF (pdf_lines.py), degraded afresh
        if len(text) > max_chars:  # longer than the curriculum allows: a generated line instead
            img, text = render_line(src.line(max_chars), src.line(80), bank, rng)
    else:
        img, text = render_line(src.line(max_chars), src.line(80), bank, rng)
    x = normalise(img, rng.choice(RESAMPLERS))
    return x, text


def collate(samples):
    """samples of (pixels [32,W], text) -> tensors: pixels [B,1,32,Wmax], widths [B], tokens_in, targets."""
    wmax = max(x.shape[1] for x, _ in samples)
    b = len(samples)
    pix = np.zeros((b, 1, samples[0][0].shape[0], wmax), dtype=np.float32)
    widths = np.zeros(b, dtype=np.int64)
    ids = [charset.encode(t)[: 250] for _, t in samples]
    tmax = max(len(i) for i in ids) + 1
    tin = np.full((b, tmax), charset.PAD, dtype=np.int64)
    tgt = np.full((b, tmax), charset.PAD, dtype=np.int64)
    for i, ((x, _), seq) in enumerate(zip(samples, ids)):
        pix[i, 0, :, : x.shape[1]] = x
        widths[i] = x.shape[1]
        tin[i, 0] = charset.BOS
        tin[i, 1: len(seq) + 1] = seq
        tgt[i, : len(seq)] = seq
        tgt[i, len(seq)] = charset.EOS
    return {"pixels": torch.from_numpy(pix), "widths": torch.from_numpy(widths),
            "tokens": torch.from_numpy(tin), "targets": torch.from_numpy(tgt), "texts": [t for _, t in samples]}


def worker_sources(seed: int):
    """This data worker's own random stream, text source and fonts (each worker of a loader draws differently)."""
    info = get_worker_info()
    seed = seed * 1000 + (info.id if info else 0)
    rng = random.Random(seed)
    np.random.seed(seed % 2**32)
    return rng, TextSource(seed), FontBank()


class LineBatches(IterableDataset):
    """Endless width-bucketed batches; `max_chars` is a shared value the trainer raises (curriculum)."""

    def __init__(self, seed: int, max_chars, pixel_budget: int = 12000, max_batch: int = 48, pool: int = 384,
                 as_numpy: bool = False, receipt_share: float = 0.0, pdf_lines: str | None = None, pdf_share: float = 0.0,
                 lang_share: float = 0.0):
        self.seed, self.max_chars, self.as_numpy, self.receipt_share = seed, max_chars, as_numpy, receipt_share
        self.lang_share = lang_share
        self.pdf_lines, self.pdf_share = pdf_lines, pdf_share
        self.pixel_budget, self.max_batch, self.pool = pixel_budget, max_batch, pool

    def __iter__(self):
        rng, src, bank = worker_sources(self.seed)
        pdf_pool = PdfLinePool(self.pdf_lines) if self.pdf_lines and self.pdf_share else None
        euro = EuropeanText(rng.randint(0, 2**31)) if self.lang_share else None
        while True:
            cap = int(self.max_chars.value) if hasattr(self.max_chars, "value") else int(self.max_chars)
            samples = [make_sample(src, bank, rng, cap, self.receipt_share, pdf_pool, self.pdf_share, euro, self.lang_share)
                       for _ in range(self.pool)]
            samples.sort(key=lambda s: s[0].shape[1])
            batches, cur = [], []
            for s in samples:
                if cur and (len(cur) + 1) * s[0].shape[1] > self.pixel_budget or len(cur) >= self.max_batch:
                    batches.append(cur)
                    cur = []
                cur.append(s)
            if cur:
                batches.append(cur)
            rng.shuffle(batches)
            for b in batches:
                out = collate(b)
                yield {k: v.numpy() for k, v in out.items() if k != "texts"} if self.as_numpy else out


def as_is(batch):
    """The loader's collate_fn for numpy batches: they travel through a pipe, not shared memory."""
    return batch


def held_out(n: int = 200, seed: int = 987654, max_chars: int = 120, lang_share: float = 0.0):
    """A fixed set of synthetic lines never drawn by training (its own seed and source stream); with lang_share,
    that share of them in european.py's languages."""
    rng = random.Random(seed)
    np.random.seed(seed)
    src, bank = TextSource(seed), FontBank()
    euro = EuropeanText(seed) if lang_share else None
    return [make_sample(src, bank, rng, max_chars, euro=euro, lang_share=lang_share) for _ in range(n)]
