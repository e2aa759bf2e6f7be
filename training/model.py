"""Specula's OCR VLM: a CNN stem turns a line crop into visual tokens, which sit as a bidirectional prefix
before the text in one causal transformer (a decoder-only VLM). A CTC head reads the visual tokens.

The same layer code serves training (whole sequence at once) and the exported decoder contract
(new tokens against a static text cache and precomputed visual K/V), so the two cannot drift apart.
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

NEG = -1e9  # additive bias for "may not attend"; finite so that exported graphs never make NaN


# The stem's channels per conv block in every trained model but a distilled stem's (distill_vision.py).
STEM_CHANNELS = (32, 64, 128, 128, 160)


@dataclass
class ModelConfig:
    vocab_size: int
    d_model: int = 192
    n_layers: int = 4
    n_heads: int = 4
    d_ff: int = 768
    max_visual: int = 512  # visual tokens: MAX_WIDTH / 4 plus room
    max_text: int = 256  # text positions (BOS + characters + EOS)
    image_height: int = 32
    # Region bundles (> 0): a sequence reads up to this many lines, each line's visual tokens and text carry a
    # learnt line embedding, and a text position is line * max_text + position within the line (BOS opens
    # each line), so each line reuses the line model's own positions. 0: a line bundle.
    max_lines: int = 0
    # The stem's channels per conv block: checkpoints from before the field have STEM_CHANNELS.
    stem_channels: tuple = STEM_CHANNELS
    # > 0: the visual tokens pass through a vision tower of their own (n_layers layers with this feed-forward width,
    # distill_vision.py) whose per-layer K/V the decoder's layers read; 0: through the decoder's own layers.
    vision_d_ff: int = 0

    def to_dict(self):
        return asdict(self)


class Stem(nn.Module):
    """[B,1,32,W] -> [B, W/4, d]: height collapsed into channels, width downsampled 4x.

    Columns past each row's real width are zeroed after every block, so a line's features do not depend
    on how much padding its batch has (BatchNorm's shift would otherwise leak into the right edge).
    """

    def __init__(self, d: int, channels=STEM_CHANNELS):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

        # (block, pool kernel) per stage; the width halves at the first two pools only.
        c = list(channels)
        self.blocks = nn.ModuleList([block(cin, cout) for cin, cout in zip([1] + c[:-1], c)])
        self.pools = [(2, 2), (2, 2), None, (2, 1), (2, 1)]
        self.proj = nn.Linear(c[-1] * 2, d)

    def forward(self, x, widths):
        w = widths
        for blk, pool in zip(self.blocks, self.pools):
            x = blk(x)
            # Pool first, then mask at the pooled width: the same numbers (the ReLU's output is >= 0, the mask 0/1,
            # and widths are multiples of 4, so no pooling window straddles a row's edge) on a quarter or half of
            # the values. The int8 graph's mask multiply cost 9% of a vision pass at full resolution.
            if pool is not None:
                x = F.max_pool2d(x, pool, pool)
                w = torch.div(w + pool[1] - 1, pool[1], rounding_mode="floor")
            x = x * column_mask(w, x.shape[-1])
        b, c, h, v = x.shape
        f = x.permute(0, 3, 1, 2).reshape(b, v, c * h)
        return self.proj(f)


def column_mask(widths, n: int):
    """[B] real widths -> [B,1,1,n] float mask of the columns inside them."""
    return (torch.arange(n, device=widths.device)[None] < widths[:, None]).float()[:, None, None, :]


class Layer(nn.Module):
    def __init__(self, cfg: ModelConfig, d_ff: int = 0):
        super().__init__()
        d, self.h = cfg.d_model, cfg.n_heads
        self.dh = d // cfg.n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, d_ff or cfg.d_ff), nn.GELU(), nn.Linear(d_ff or cfg.d_ff, d))

    def project(self, x):
        """x [B,T,d] -> q, k, v each [B,H,T,dh]."""
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        return q, k, v

    def attend(self, x, q, k, v, bias):
        """Attention of q over (k, v) with an additive bias [B,1|H,T,S]; returns new x and the probabilities."""
        b, _, t, _ = q.shape
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + bias
        p = torch.softmax(s, dim=-1)
        o = torch.matmul(p, v).permute(0, 2, 1, 3).reshape(b, t, self.h * self.dh)
        x = x + self.out(o)
        x = x + self.ff(self.ln2(x))
        return x, p


class OCRModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.stem = Stem(d, cfg.stem_channels)
        self.vis_pos = nn.Embedding(cfg.max_visual, d)
        self.tok = nn.Embedding(cfg.vocab_size, d)
        self.txt_pos = nn.Embedding(cfg.max_text, d)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, cfg.vocab_size, bias=False)
        self.ctc_head = nn.Linear(d, cfg.vocab_size)
        if cfg.vision_d_ff:
            self.vision_layers = nn.ModuleList(Layer(cfg, cfg.vision_d_ff) for _ in range(cfg.n_layers))
            self.vision_ln_f = nn.LayerNorm(d)
        if cfg.max_lines:
            # Zero at first: a region model starts as the line model it is initialised from.
            self.vis_line = nn.Embedding(cfg.max_lines, d)
            self.txt_line = nn.Embedding(cfg.max_lines, d)
            nn.init.zeros_(self.vis_line.weight)
            nn.init.zeros_(self.txt_line.weight)
        nn.init.normal_(self.vis_pos.weight, std=0.02)
        nn.init.normal_(self.txt_pos.weight, std=0.02)
        nn.init.normal_(self.tok.weight, std=0.02)

    # ---- visual prefix -----------------------------------------------------------------------------
    def visual_embed(self, pixels, widths, lines=None):
        v = self.stem(pixels, widths)
        pos = torch.arange(v.shape[1], device=v.device)
        v = v + self.vis_pos(pos)[None]
        if self.cfg.max_lines:  # a crop without a line index reads as a region's first line
            v = v + self.vis_line(lines if lines is not None else torch.zeros_like(widths))[:, None]
        return v

    def text_embed(self, tokens, positions):
        """Token plus position; in a region model the position also names the line (line * max_text + index)."""
        if not self.cfg.max_lines:
            return self.tok(tokens) + self.txt_pos(positions)
        line = torch.div(positions, self.cfg.max_text, rounding_mode="floor").clamp(max=self.cfg.max_lines - 1)
        within = torch.remainder(positions, self.cfg.max_text)
        return self.tok(tokens) + self.txt_pos(within) + self.txt_line(line)

    def vision(self, pixels, widths, lines=None):
        """pixels [B,1,H,W], widths [B] (lines [B]: each crop's line within its region, region models only)
        -> per-layer K/V [L,B,H,V,dh] x2, CTC logits, visual mask [B,V]."""
        ks, vs, x, vis_mask, _ = self.vision_tower(self.visual_embed(pixels, widths, lines), widths)
        ctc = self.ctc_head(self.visual_ln_f(x))
        return torch.stack(ks), torch.stack(vs), ctc, vis_mask

    def vision_tower(self, x, widths, attention_of=()):
        """The visual tokens x [B,V,d] through the layers that make the decoder's visual K/V (the decoder's own, or
        a vision tower's): per-layer K and V lists, the last layer's x, the visual mask [B,V], and the attention
        probabilities [B,H,V,V] of the layers in `attention_of`."""
        vis_mask = visual_mask(widths, x.shape[1])
        bias = ((1.0 - vis_mask) * NEG)[:, None, None, :]
        ks, vs, probs = [], [], {}
        for i, layer in enumerate(self.visual_layers):
            q, k, v = layer.project(x)
            ks.append(k)
            vs.append(v)
            x, p = layer.attend(x, q, k, v, bias)
            if i in attention_of:
                probs[i] = p
        return ks, vs, x, vis_mask, probs

    @property
    def visual_layers(self):
        return self.vision_layers if self.cfg.vision_d_ff else self.layers

    @property
    def visual_ln_f(self):
        """The norm before the CTC head: the vision tower's own, or the one the LM head shares."""
        return self.vision_ln_f if self.cfg.vision_d_ff else self.ln_f

    # ---- the decoder contract ------------------------------------------------------------------------
    def decode(self, tokens, positions, cache_k, cache_v, vis_k, vis_v, vis_mask, attn_bias, focal=(1, 2), attention_of=-1):
        """New tokens against the static text cache and the visual K/V.

        tokens/positions [B,T]; cache_k/v [L,B,H,C,dh]; vis_k/v [L,B,H,V,dh]; vis_mask [B,V] or [B,1|T,V];
        attn_bias [B,T,C+T] over (cache slots, new tokens). Returns logits [B,T,vocab], hidden [B,T,d],
        new K/V [L,B,H,T,dh], and the focal layers' mean attention mass on each visual token [B,T,V]
        (and, with attention_of >= 0 (training), that layer's head-0 attention over the visual tokens [B,T,V]).
        """
        x = self.text_embed(tokens, positions)
        head0 = None
        vb = (1.0 - vis_mask) * NEG  # B,V, or B,T,V: each new token its own visual tokens (focal pruning)
        if vb.dim() == 2:
            vb = vb[:, None, :]
        vb = vb.expand(-1, tokens.shape[1], -1)  # B,T,V
        bias = torch.cat([vb, attn_bias], dim=-1)[:, None]  # B,1,T,V+C+T
        nv = vis_k.shape[3]
        new_k, new_v, mass = [], [], []
        for i, layer in enumerate(self.layers):
            q, k, v = layer.project(x)
            new_k.append(k)
            new_v.append(v)
            keys = torch.cat([vis_k[i], cache_k[i], k], dim=2)
            vals = torch.cat([vis_v[i], cache_v[i], v], dim=2)
            x, p = layer.attend(x, q, keys, vals, bias)
            if i in focal:
                mass.append(p[..., :nv].mean(dim=1))
            if i == attention_of:
                head0 = p[:, 0, :, :nv]
        h = self.ln_f(x)
        logits = self.lm_head(h)
        if attention_of >= 0:
            return logits, h, torch.stack(new_k), torch.stack(new_v), torch.stack(mass).mean(0), head0
        return logits, h, torch.stack(new_k), torch.stack(new_v), torch.stack(mass).mean(0)

    # ---- training: the whole sequence at once --------------------------------------------------------
    def prefix_pass(self, pixels, widths, tokens, attention_of=(), blocks=None, block_len: int = 0, mask_id: int = 3):
        """The teacher-forced pass over [visual prefix, text]: the last layer's output x [B,V+T,d] (before ln_f),
        the number of visual tokens, the visual mask [B,V], and, for each layer index in `attention_of`, that
        layer's attention probabilities [B,H,V+T,V+T] (training, the MTP head and the focal-layer measurement
        all run this one pass).

        blocks [B,NB] (optional): for each start p, `block_len` mask tokens at text positions p+1..p+block_len
        are appended after the text (the diffusion drafter's training view). A block sees the visual tokens, the
        text up to and including position p, and its own block (bidirectionally); nothing sees a block. Their
        outputs follow the text in x: block k of a row at V+T+k*block_len.
        """
        b, t = tokens.shape
        vis = self.visual_embed(pixels, widths)
        nv = vis.shape[1]
        vis_mask = visual_mask(widths, nv)
        pos = torch.arange(t, device=tokens.device)
        txt = self.tok(tokens) + self.txt_pos(pos)[None]
        parts = [vis, txt]
        nb = 0 if blocks is None else blocks.shape[1] * block_len
        if nb:
            offs = torch.arange(1, block_len + 1, device=tokens.device)
            bpos = (blocks[:, :, None] + offs[None, None]).reshape(b, nb).clamp(max=self.cfg.max_text - 1)
            parts.append(self.tok.weight[mask_id][None, None] + self.txt_pos(bpos))
        x = torch.cat(parts, dim=1)
        n = nv + t + nb
        # Prefix-LM mask: visual tokens see the (real) visual tokens; text sees them and earlier text.
        allow = torch.zeros(b, n, n, dtype=torch.bool, device=x.device)
        vm = vis_mask.bool()
        allow[:, :, :nv] = vm[:, None, :]
        allow[:, nv:nv + t, nv:nv + t] = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))[None]
        if nb:
            starts = blocks.repeat_interleave(block_len, dim=1)  # [B,nb]: each block row's p
            allow[:, nv + t:, nv:nv + t] = pos[None, None, :] <= starts[:, :, None]
            kid = torch.arange(nb, device=x.device) // block_len
            allow[:, nv + t:, nv + t:] = (kid[:, None] == kid[None, :])[None]
        bias = torch.where(allow, 0.0, NEG)[:, None]
        if self.cfg.vision_d_ff:
            return self.text_over_tower(vis, widths, x[:, nv:], bias[:, :, nv:], attention_of)
        probs = {}
        for i, layer in enumerate(self.layers):
            q, k, v = layer.project(x)
            x, p = layer.attend(x, q, k, v, bias)
            if i in attention_of:
                probs[i] = p
        return x, nv, vis_mask, probs

    def text_over_tower(self, vis, widths, xt, bias, attention_of=()):
        """prefix_pass with a vision tower: the visual tokens through the tower, the text (and mask blocks) xt
        through the decoder's layers over the tower's K/V, with the text rows of the prefix-LM bias [B,1,T',V+T']."""
        ks, vs, xv, vis_mask, vprobs = self.vision_tower(vis, widths, attention_of)
        nv = vis.shape[1]
        probs = {}
        for i, layer in enumerate(self.layers):
            q, k, v = layer.project(xt)
            xt, p = layer.attend(xt, q, torch.cat([ks[i], k], 2), torch.cat([vs[i], v], 2), bias)
            if i in attention_of:
                probs[i] = torch.cat([F.pad(vprobs[i], (0, p.shape[-1] - nv)), p], dim=2)
        return torch.cat([xv, xt], 1), nv, vis_mask, probs

    def forward(self, pixels, widths, tokens, guide_layer: int = -1, blocks=None, block_len: int = 0):
        """Teacher-forced pass. Returns LM logits [B,T,vocab], CTC logits [B,V,vocab], visual mask [B,V],
        (when guide_layer >= 0) head 0's attention over the visual tokens in that layer, text rows then block
        rows [B,T+NB*block_len,V], for alignment guidance,
        and (when blocks are given) the mask blocks' logits [B,NB*block_len,vocab], else None."""
        x, nv, vis_mask, probs = self.prefix_pass(pixels, widths, tokens, (guide_layer,) if guide_layer >= 0 else (),
                                                  blocks=blocks, block_len=block_len)
        t = tokens.shape[1]
        guide = probs[guide_layer][:, 0, nv:, :nv] if guide_layer >= 0 else None  # text rows, then block rows
        h = self.ln_f(x)
        block_logits = self.lm_head(h[:, nv + t:]) if blocks is not None else None
        return self.lm_head(h[:, nv:nv + t]), self.ctc_head(self.visual_ln_f(x[:, :nv])), vis_mask, guide, block_logits


def block_targets(targets, blocks, block_len: int, pad: int = 0):
    """The mask block after start p predicts the tokens after position p+1: targets[p+1 .. p+block_len]
    (targets[j] is the token at position j+1); past the end of the row, PAD (ignored by the loss)."""
    b, t = targets.shape
    offs = torch.arange(1, block_len + 1, device=targets.device)
    idx = (blocks[:, :, None] + offs[None, None]).reshape(b, -1)
    padded = torch.cat([targets, torch.full((b, block_len + 1), pad, dtype=targets.dtype, device=targets.device)], 1)
    return padded.gather(1, idx.clamp(max=padded.shape[1] - 1))


def sample_blocks(targets, n_blocks: int, eos: int, generator=None):
    """Block starts p per row, uniform over the positions whose next-next token exists (0 .. chars-1)."""
    chars = ((targets != 0) & (targets != eos)).sum(1).cpu()  # characters per row
    hi = chars.clamp(min=1).float()
    u = torch.rand(targets.shape[0], n_blocks, generator=generator)
    return (u * hi[:, None]).long().to(targets.device)


def ctc_alignment(ctc_logits, vis_mask, targets, blank: int = 0):
    """Where each target character sits among the visual tokens, read off the CTC head's own best path.

    Returns [(row, text_index, visual_index)] for rows whose greedy CTC reading equals the target exactly
    (elsewhere the alignment would be a guess). targets: list of id lists.
    """
    ids = ctc_logits.argmax(-1).tolist()
    lens = vis_mask.sum(1).long().tolist()
    out = []
    for b, (row, n, tgt) in enumerate(zip(ids, lens, targets)):
        seq, pos, prev = [], [], -1
        for t in range(n):
            c = row[t]
            if c != blank and c != prev:
                seq.append(c)
                pos.append(t)
            prev = c
        if seq == tgt:
            out += [(b, i, p) for i, p in enumerate(pos)]
    return out


def visual_mask(widths, nv: int, stride: int = 4):
    """widths [B] (pixels) -> [B, nv] float mask of real visual tokens."""
    n = torch.div(widths + stride - 1, stride, rounding_mode="floor")
    return (torch.arange(nv, device=widths.device)[None] < n[:, None]).float()


@torch.no_grad()
def greedy_decode(model: OCRModel, pixels, widths, max_len: int, bos: int, eos: int, pick=None, chars_per_frame: float = 1.0):
    """Plain greedy AR decoding through the decoder contract (the same path the engine runs), with the engine's
    per-line cap: no more tokens than the line has visual tokens (times the bundle's charsPerFrame), plus 4
    (greedy.ts, decode/scheduler.ts), which also ends a runaway repetition where the engine would. `pick` (logits
    [B, vocab] -> ids [B]) replaces the argmax: grpo.py samples its readings through here."""
    b = pixels.shape[0]
    dev = pixels.device
    vk, vv, ctc, vm = model.vision(pixels, widths)
    limit = torch.ceil(vm.sum(1).float() * chars_per_frame).long() + 4
    L, _, H, _, dh = vk.shape
    cache_k = torch.zeros(L, b, H, max_len + 1, dh, device=dev, dtype=vk.dtype)
    cache_v = torch.zeros_like(cache_k)
    tok = torch.full((b, 1), bos, dtype=torch.long, device=dev)
    out = torch.zeros(b, max_len, dtype=torch.long, device=dev)
    done = torch.zeros(b, dtype=torch.bool, device=dev)
    C = max_len + 1
    for step in range(max_len):
        slots = torch.arange(C, device=dev)
        cache_bias = torch.where(slots < step, 0.0, NEG)[None, None, :].expand(b, 1, C)
        attn_bias = torch.cat([cache_bias, torch.zeros(b, 1, 1, device=dev)], dim=-1)
        pos = torch.full((b, 1), step, dtype=torch.long, device=dev)
        logits, _, nk, nvv, _ = model.decode(tok, pos, cache_k, cache_v, vk, vv, vm, attn_bias)
        cache_k[:, :, :, step] = nk[:, :, :, 0]
        cache_v[:, :, :, step] = nvv[:, :, :, 0]
        nxt = logits[:, -1].argmax(-1) if pick is None else pick(logits[:, -1])
        nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
        out[:, step] = nxt
        done |= (nxt == eos) | (step + 1 >= limit)
        tok = nxt[:, None]
        if bool(done.all()):
            break
    return out, ctc, vm


def ctc_greedy(ctc_logits, vis_mask, blank: int = 0):
    ids = ctc_logits.argmax(-1)
    res = []
    for row, m in zip(ids.tolist(), vis_mask.tolist()):
        prev, seq = -1, []
        for i, keep in zip(row, m):
            if not keep:
                break
            if i != prev and i != blank:
                seq.append(i)
            prev = i
        res.append(seq)
    return res


def load_model(path: str, device="cpu"):
    """A weights-only checkpoint (train.py's weights.pt) -> (the model in eval mode on `device`, the checkpoint)."""
    # Our own files hold plain Python values beside the tensors, which PyTorch >= 2.6 refuses by default.
    st = torch.load(path, map_location=device, weights_only=False)
    if "config" not in st:
        raise ValueError(f"{path}: not a model checkpoint (no 'config')")
    model = OCRModel(ModelConfig(**st["config"])).to(device)
    model.load_state_dict(st["model"])
    model.eval()
    return model, st
