"""GRPO on the AR path (the RL stage of GravityOCR and Jina-OCR): for each synthetic line, a group of readings
sampled from the model is scored by a reward built from CER (partial credit: 1 - CER, floored at 0); each
reading's advantage is its reward against its group's (mean and spread); the policy gradient raises the
log-probability of the readings that beat their group, and a KL leash (the k3 estimator, per token) holds the
model near where it started. On-policy, one update per group, so no ratio clipping is needed.

Only the decoder's reading is trained here (the CTC head's loss is not in it); the mask-block (diffusion)
objective is kept beside it (`--diffusion-weight`, teacher-forced on the lines' true text) so the diffusion drafter
does not lose what it has. The model is kept only if greedy AR CER improves on the held-out synthetic lines and
on every public line set (`npm run eval -- --suite lines --drafter none --model ...` after export).

  nohup /usr/bin/python3 training/grpo.py --init training/checkpoints/specula-line-base.pt --run training/runs/grpo \\
    --hours 0.5 > training/runs/grpo.out 2>&1 &
"""
import argparse
import copy
import json
import os
import random
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from data import collate, held_out, make_sample  # noqa: E402
from metrics import cer, edit_distance, norm  # noqa: E402
from model import block_targets, greedy_decode, load_model, sample_blocks  # noqa: E402
from textgen import TextSource  # noqa: E402
from render import FontBank  # noqa: E402


@torch.no_grad()
def sample_readings(model, pixels, widths, max_len: int, temperature: float, generator):
    """Sampled AR readings through the decoder contract, as greedy_decode runs it (the engine's per-line cap)."""
    def pick(logits):
        return torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)[:, 0]
    out, _ctc, _vm = greedy_decode(model, pixels, widths, max_len, charset.BOS, charset.EOS, pick=pick)
    return out


def ids_of(row: list[int]) -> list[int]:
    """A sampled row up to (not including) its EOS."""
    return row[: row.index(charset.EOS)] if charset.EOS in row else row


def reward(hyp: str, ref: str) -> float:
    h, r = norm(hyp), norm(ref)
    return max(0.0, 1.0 - edit_distance(h, r) / max(1, len(r)))


def sequence_logprobs(model, pixels, widths, seqs: list[list[int]], diffusion: tuple[int, int] | None = None, generator=None):
    """Teacher-forced log-probability of each sequence (its tokens and its EOS), summed, and the token count;
    with `diffusion` (n_blocks, block_len), also the mask-block loss on the same rows."""
    tmax = max(len(s) for s in seqs) + 1
    b = len(seqs)
    tin = torch.full((b, tmax), charset.PAD, dtype=torch.long)
    tgt = torch.full((b, tmax), charset.PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        tin[i, 0] = charset.BOS
        tin[i, 1: len(s) + 1] = torch.tensor(s, dtype=torch.long)
        tgt[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        tgt[i, len(s)] = charset.EOS
    blocks = block_len = None
    if diffusion:
        blocks = sample_blocks(tgt, diffusion[0], charset.EOS, generator=generator)
        block_len = diffusion[1]
    logits, _ctc, _vm, _g, block_logits = model(pixels, widths, tin, blocks=blocks, block_len=block_len or 0)
    lp = torch.log_softmax(logits, -1).gather(-1, tgt.clamp(min=0)[..., None])[..., 0]
    valid = (tgt != charset.PAD).float()
    diff = None
    if diffusion:
        bt = block_targets(tgt, blocks, block_len, pad=charset.PAD)
        diff = F.cross_entropy(block_logits.reshape(-1, block_logits.shape[-1]), bt.reshape(-1), ignore_index=charset.PAD)
    return lp, valid, diff


def evaluate(model, lines, batch: int = 32, max_len: int = 160) -> float:
    model.eval()
    refs, hyps = [], []
    order = sorted(range(len(lines)), key=lambda i: lines[i][0].shape[1])
    with torch.no_grad():
        for s in range(0, len(order), batch):
            bt = collate([lines[i] for i in order[s: s + batch]])
            out, _ctc, _vm = greedy_decode(model, bt["pixels"], bt["widths"], max_len, charset.BOS, charset.EOS)
            refs += bt["texts"]
            hyps += [charset.decode(ids_of(r)) for r in out.tolist()]
    model.train()
    return cer(hyps, refs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", required=True, help="weights-only checkpoint to start from (and the KL reference)")
    ap.add_argument("--run", required=True)
    ap.add_argument("--hours", type=float, default=0.5)
    ap.add_argument("--lines", type=int, default=8, help="lines per step")
    ap.add_argument("--group", type=int, default=6, help="readings sampled per line")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=5e-6)
    ap.add_argument("--kl", type=float, default=0.04, help="KL leash weight")
    ap.add_argument("--diffusion-weight", type=float, default=0.3)
    ap.add_argument("--max-chars", type=int, default=80)
    ap.add_argument("--receipt-share", type=float, default=0.25)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--eval-lines", type=int, default=200, help="held-out synthetic lines (train.py's set)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.run, exist_ok=True)
    with open(os.path.join(args.run, "pid"), "w") as f:
        f.write(str(os.getpid()))

    model, st = load_model(args.init)
    model.train()
    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    block = st.get("diffusion", {"blockMin": 2, "blockMax": 10})
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    rng = random.Random(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    src, bank = TextSource(args.seed * 104729), FontBank()
    evalset = held_out()[: args.eval_lines]
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))

    def save(step: int):
        cpu = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        out = os.path.join(args.run, "weights.pt")
        torch.save({**{k: v for k, v in st.items() if k not in ("model", "opt")}, "model": cpu,
                    "grpo": {"steps": step, "from": args.init}}, out + ".tmp")
        os.replace(out + ".tmp", out)

    base_cer = evaluate(model, evalset)
    log.write(json.dumps({"step": 0, "eval_cer_ar": base_cer}) + "\n")
    log.flush()
    print(f"held-out greedy AR CER at the start: {100 * base_cer:.2f}%", flush=True)
    t0 = time.time()
    step = 0
    while not stop["now"] and time.time() - t0 < args.hours * 3600:
        samples = [make_sample(src, bank, rng, args.max_chars, args.receipt_share) for _ in range(args.lines)]
        bt = collate(samples)
        g = args.group
        pixels = bt["pixels"].repeat_interleave(g, 0)
        widths = bt["widths"].repeat_interleave(g, 0)
        model.eval()
        rows = sample_readings(model, pixels, widths, 160, args.temperature, gen).tolist()
        model.train()
        seqs = [ids_of(r) for r in rows]
        rewards = torch.tensor([reward(charset.decode(s), bt["texts"][i // g]) for i, s in enumerate(seqs)]).view(-1, g)
        adv = (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)
        adv = adv.view(-1)
        lp, valid, _ = sequence_logprobs(model, pixels, widths, seqs)
        diff = None
        if args.diffusion_weight > 0:  # mask blocks learn the true text, never a sampled reading
            truth = [charset.encode(t)[:250] for t in bt["texts"]]
            _, _, diff = sequence_logprobs(model, bt["pixels"], bt["widths"], truth, (2, rng.randint(block["blockMin"], block["blockMax"])), gen)
        with torch.no_grad():
            ref_lp, _, _ = sequence_logprobs(ref, pixels, widths, seqs)
        n = valid.sum(1).clamp(min=1)
        seq_lp = (lp * valid).sum(1) / n
        d = (ref_lp - lp) * valid
        kl = ((torch.exp(d) - d - 1) * valid).sum(1) / n
        pg = -(adv * seq_lp).mean()
        loss = pg + args.kl * kl.mean() + (args.diffusion_weight * diff if diff is not None else 0.0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        rec = {"step": step, "reward": rewards.mean().item(), "reward_best": rewards.max(1).values.mean().item(),
               "kl": kl.mean().item(), "pg": pg.item(), "diff": diff.item() if diff is not None else None,
               "minutes": (time.time() - t0) / 60}
        if step % args.eval_every == 0:
            rec["eval_cer_ar"] = evaluate(model, evalset)
            save(step)
            print(json.dumps(rec), flush=True)
        log.write(json.dumps(rec) + "\n")
        log.flush()
    rec = {"step": step, "eval_cer_ar": evaluate(model, evalset), "minutes": (time.time() - t0) / 60}
    log.write(json.dumps(rec) + "\n")
    log.close()
    save(step)
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
