"""Joint CTC/attention greedy decoding (Watanabe et al. 2017), as the engine's default `joint` verifier does it
(src/engine/strategies/verifiers/joint.ts): at each position, over the decoder's top candidates, the token maximising
(1 - w) log p_decoder(c) + w [log P_ctc(prefix + c ...) - log P_ctc(prefix ...)], where P_ctc(prefix ...) is
the CTC head's probability that the line's reading begins with the prefix; EOS scores the probability that the
reading is exactly the prefix. Lines are capped as the engine caps them (visual tokens + 4).

    /usr/bin/python3 training/joint.py --ckpt training/checkpoints/specula-line-base.pt --weights 0.3,0.5,0.7,0.9
    # CER on held-out synthetic lines of their own seed (13579: not the held-out set the bundle reports on)
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from data import collate, held_out  # noqa: E402
from metrics import cer  # noqa: E402
from model import NEG, OCRModel, load_model  # noqa: E402

NEG_INF = -1e30
CANDIDATES = 5


@torch.no_grad()
def joint_decode(model: OCRModel, pixels, widths, weight: float, max_len: int = 160, k: int = CANDIDATES):
    b = pixels.shape[0]
    vk, vv, ctc, vm = model.vision(pixels, widths)
    real = vm.sum(1).long()
    limit = real + 4
    T = ctc.shape[1]
    lp = torch.log_softmax(ctc.float(), -1)
    frame = torch.arange(T)[None, :] < real[:, None]
    blank = torch.where(frame, lp[..., charset.PAD], torch.zeros_like(lp[..., 0]))  # padded frames: blank, p = 1
    lp = torch.where(frame[..., None], lp, torch.full_like(lp, NEG_INF))
    r_n = torch.full((b, T), NEG_INF)  # the empty prefix: no character yet
    r_b = torch.cumsum(blank, 1)
    score = torch.zeros(b)
    last = torch.full((b,), -1, dtype=torch.long)
    L, _, H, _, dh = vk.shape
    C = max_len + 1
    cache_k = torch.zeros(L, b, H, C, dh)
    cache_v = torch.zeros_like(cache_k)
    tok = torch.full((b, 1), charset.BOS, dtype=torch.long)
    out = torch.zeros(b, max_len, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    rows = torch.arange(b)
    end_t = (real - 1).clamp(min=0)[:, None]
    for step in range(max_len):
        cache_bias = torch.where(torch.arange(C) < step, 0.0, NEG)[None, None, :].expand(b, 1, C)
        attn_bias = torch.cat([cache_bias, torch.zeros(b, 1, 1)], dim=-1)
        logits, _, nk, nvv, _ = model.decode(tok, torch.full((b, 1), step, dtype=torch.long), cache_k, cache_v, vk, vv, vm, attn_bias)
        cache_k[:, :, :, step] = nk[:, :, :, 0]
        cache_v[:, :, :, step] = nvv[:, :, :, 0]
        att = torch.log_softmax(logits[:, -1].float(), -1)
        cand = att.topk(k, -1).indices  # [B,k]
        xc = lp.gather(2, cand[:, None, :].expand(b, T, k)).transpose(1, 2)  # [B,k,T]
        same = (last[:, None] == cand)[..., None]
        phi = torch.logaddexp(r_b[:, None, :].expand(b, k, T),
                              torch.where(same, torch.full((b, k, T), NEG_INF), r_n[:, None, :].expand(b, k, T)))
        rn = torch.full((b, k, T), NEG_INF)
        rb = torch.full((b, k, T), NEG_INF)
        rn[:, :, 0] = torch.where((last < 0)[:, None], xc[:, :, 0], torch.full((b, k), NEG_INF))
        psi = rn[:, :, 0].clone()
        bl = blank[:, None, :].expand(b, k, T)
        for t in range(1, T):
            rn[:, :, t] = torch.logaddexp(rn[:, :, t - 1], phi[:, :, t - 1]) + xc[:, :, t]
            rb[:, :, t] = torch.logaddexp(rb[:, :, t - 1], rn[:, :, t - 1]) + bl[:, :, t]
            psi = torch.logaddexp(psi, phi[:, :, t - 1] + xc[:, :, t])
        end = torch.logaddexp(r_n.gather(1, end_t)[:, 0], r_b.gather(1, end_t)[:, 0])
        ctc_score = torch.where(cand == charset.EOS, end[:, None].expand(b, k), psi)
        joint = (1 - weight) * att.gather(1, cand) + weight * (ctc_score - score[:, None])
        pick = joint.argmax(1)
        nxt = torch.where(done, torch.full((b,), charset.EOS, dtype=torch.long), cand[rows, pick])
        keep = done[:, None]
        r_n = torch.where(keep, r_n, rn[rows, pick])
        r_b = torch.where(keep, r_b, rb[rows, pick])
        score = torch.where(done, score, ctc_score[rows, pick])
        last = torch.where(done, last, nxt)
        out[:, step] = nxt
        done |= (nxt == charset.EOS) | (step + 1 >= limit)
        tok = nxt[:, None]
        if bool(done.all()):
            break
    return out


def evaluate_joint(model: OCRModel, lines, weight: float, batch: int = 32) -> float:
    model.eval()
    refs, hyps = [], []
    order = sorted(range(len(lines)), key=lambda i: lines[i][0].shape[1])
    for s in range(0, len(order), batch):
        b = collate([lines[i] for i in order[s: s + batch]])
        out = joint_decode(model, b["pixels"], b["widths"], weight)
        refs += b["texts"]
        hyps += [charset.decode(r) for r in out.tolist()]
    return cer(hyps, refs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--weights", default="0.3,0.5,0.7,0.9")
    ap.add_argument("--seed", type=int, default=13579, help="held-out lines of this seed (the bundle reports on 987654)")
    ap.add_argument("--lines", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, st = load_model(args.ckpt)
    lines = held_out(args.lines, seed=args.seed)
    for w in (float(x) for x in args.weights.split(",")):
        print(f"step {st.get('step')} seed {args.seed} ctc weight {w}: joint CER {evaluate_joint(model, lines, w):.4f}", flush=True)


if __name__ == "__main__":
    main()
