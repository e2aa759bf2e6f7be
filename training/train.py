"""Train the OCR VLM: LM cross-entropy on the text plus CTC on the visual tokens.

Resumable: state goes to RUN/last.pt every --save-every steps and on SIGTERM/SIGINT; a weights-only copy
goes to RUN/weights.pt (commit that one: `--init` starts a new run from it on another machine).
Logs one JSON object per line to RUN/log.jsonl. Evaluates CER on held-out synthetic lines.

  nohup /usr/bin/python3 training/train.py --run training/runs/base --hours 2 > /tmp/train.out 2>&1 &
"""
import argparse
import contextlib
import json
import multiprocessing as mp
import os
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from data import LineBatches, as_is, collate, held_out  # noqa: E402
from grow_vocab import grow  # noqa: E402
from metrics import cer  # noqa: E402
from model import (ModelConfig, OCRModel, block_targets, ctc_alignment, ctc_greedy, greedy_decode,  # noqa: E402
                   sample_blocks)


def curriculum(step: int, start: int, full: int, ramp: int) -> int:
    """Short lines first, so the decoder learns where it is reading before lines get long."""
    return int(min(full, start + (full - start) * step / max(1, ramp)))


def evaluate(model, lines, batch: int = 32, max_len: int = 160):
    model.eval()
    dev = next(model.parameters()).device
    refs, ar, ctc = [], [], []
    order = sorted(range(len(lines)), key=lambda i: lines[i][0].shape[1])
    for s in range(0, len(order), batch):
        b = collate([lines[i] for i in order[s: s + batch]])
        out, ctc_logits, vm = greedy_decode(model, b["pixels"].to(dev), b["widths"].to(dev), max_len, charset.BOS, charset.EOS)
        refs += b["texts"]
        ar += [charset.decode(r) for r in out.tolist()]
        ctc += [charset.decode(r) for r in ctc_greedy(ctc_logits, vm)]
    model.train()
    return cer(ar, refs), cer(ctc, refs), list(zip(refs[:3], ar[:3]))


@torch.no_grad()
def evaluate_blocks(model, lines, block_len: int = 8, batch: int = 32):
    """Teacher-forced diffusion drafts on held-out lines: per-position accuracy of a mask block after a clean
    prefix, and the mean run of leading correct tokens (what a greedy verifier would accept)."""
    model.eval()
    dev = next(model.parameters()).device
    g = torch.Generator().manual_seed(5)
    hit = torch.zeros(block_len)
    n = torch.zeros(block_len)
    runs = []
    for s in range(0, len(lines), batch):
        b = collate(lines[s: s + batch])
        tin, tgt = b["tokens"].to(dev), b["targets"].to(dev)
        blocks = sample_blocks(tgt, 1, charset.EOS, g).to(dev)
        _, _, _, _, bl = model(b["pixels"].to(dev), b["widths"].to(dev), tin, blocks=blocks, block_len=block_len)
        want = block_targets(tgt, blocks, block_len)
        ok = (bl.argmax(-1) == want) & (want != charset.PAD)
        valid = want != charset.PAD
        hit += ok.float().sum(0).cpu()
        n += valid.float().sum(0).cpu()
        lead = torch.cumprod((ok | ~valid).float(), 1) * valid.float()
        runs += lead.sum(1).tolist()
    model.train()
    return (hit / n.clamp(min=1)).tolist(), sum(runs) / max(1, len(runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--init", help="weights-only checkpoint to start from")
    ap.add_argument("--hours", type=float, default=2.0, help="stop (and save) after this long")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=300, help="steps of linear lr warm-up for a fresh optimiser")
    ap.add_argument("--decay-from", type=int, default=None, help="cool down: from this step the lr falls linearly ...")
    ap.add_argument("--decay-steps", type=int, default=1000, help="... over this many steps ...")
    ap.add_argument("--decay-to", type=float, default=3e-5, help="... to this lr, and stays there")
    ap.add_argument("--decay-frac", type=float, default=None,
                    help="or cool down by the clock: over the last FRAC of --hours, for runs whose speed is unknown")
    ap.add_argument("--ctc-weight", type=float, default=0.5)
    ap.add_argument("--pixel-budget", type=int, default=12000, help="sum of padded widths per batch")
    ap.add_argument("--max-batch", type=int, default=48)
    ap.add_argument("--cur-start", type=int, default=16)
    ap.add_argument("--cur-full", type=int, default=120)
    ap.add_argument("--cur-ramp", type=int, default=2500)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--guide-weight", type=float, default=0.0, help="CTC-guided attention loss weight")
    ap.add_argument("--guide-layer", type=int, default=1)
    ap.add_argument("--diffusion-weight", type=float, default=0.0, help="mask-block (diffusion drafter) loss weight")
    ap.add_argument("--diffusion-blocks", type=int, default=2, help="mask blocks per row")
    ap.add_argument("--block-min", type=int, default=4)
    ap.add_argument("--block-max", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda (fp32 with TF32 matrix products)")
    ap.add_argument("--amp", action="store_true", help="on cuda: bf16 autocast")
    ap.add_argument("--pipe-batches", action="store_true",
                    help="send batches from the data workers through pipes (for machines with a small /dev/shm)")
    ap.add_argument("--pool", type=int, default=None, help="lines each data worker renders before bucketing them")
    ap.add_argument("--workers", type=int, default=1, help="data-generating processes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--receipt-share", type=float, default=0.0, help="share of receipt-like lines (receipt.py)")
    ap.add_argument("--pdf-lines", help="a pool of typeset lines cut from real PDFs (pdf_lines.py --out DIR)")
    ap.add_argument("--pdf-share", type=float, default=0.0, help="share of lines drawn from --pdf-lines")
    ap.add_argument("--lang-share", type=float, default=0.0,
                    help="share of lines in european.py's languages (Latin Extended, Greek, Cyrillic)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    os.makedirs(args.run, exist_ok=True)
    with open(os.path.join(args.run, "pid"), "w") as f:  # stop with: kill -TERM $(cat RUN/pid)
        f.write(str(os.getpid()))
    cfg = ModelConfig(vocab_size=len(charset.VOCAB))
    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model = OCRModel(cfg).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    step, seen = 0, 0
    warm_from = 0  # the step a fresh optimiser starts at: its warm-up counts from there
    last = os.path.join(args.run, "last.pt")
    if os.path.exists(last):
        st = torch.load(last, map_location=dev, weights_only=False)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step, seen = st["step"], st["seen"]
        warm_from = None  # the optimiser's state came back with the weights: no warm-up
        print(f"resumed {last} at step {step}", flush=True)
    elif args.init:
        st = torch.load(args.init, map_location=dev, weights_only=False)
        model.load_state_dict(grow(st["model"], cfg.vocab_size))  # new letters get rows (grow_vocab.py)
        step, seen = st.get("step", 0), st.get("seen", 0)
        warm_from = step
        print(f"initialised from {args.init} (step {step})", flush=True)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters", flush=True)

    def save():
        tmp = last + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "seen": seen,
                    "config": cfg.to_dict()}, tmp)
        os.replace(tmp, last)
        cpu = {k: v.detach().cpu() for k, v in model.state_dict().items()}  # loadable anywhere
        extra = {"diffusion": {"blockMin": args.block_min, "blockMax": args.block_max}} if args.diffusion_weight > 0 else {}
        weights = os.path.join(args.run, "weights.pt")
        torch.save({"model": cpu, "step": step, "seen": seen, "config": cfg.to_dict(), **extra}, weights + ".tmp")
        os.replace(weights + ".tmp", weights)

    stop = {"now": False}

    def on_signal(*_):
        stop["now"] = True
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    max_chars = mp.Value("i", curriculum(step, args.cur_start, args.cur_full, args.cur_ramp))
    ds = LineBatches(seed=args.seed * 7919 + step, max_chars=max_chars, pixel_budget=args.pixel_budget,
                     max_batch=args.max_batch, pool=args.pool or max(384, 8 * args.max_batch), as_numpy=args.pipe_batches,
                     receipt_share=args.receipt_share, pdf_lines=args.pdf_lines, pdf_share=args.pdf_share,
                     lang_share=args.lang_share)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args.workers, prefetch_factor=4,
                                         collate_fn=as_is if args.pipe_batches else None,
                                         persistent_workers=True)
    evalset = held_out()
    euro_set = held_out(200, seed=24680, lang_share=1.0) if args.lang_share else None
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    t0 = time.time()
    window_t, window_lines, acc = time.time(), 0, {"loss": 0.0, "lm": 0.0, "ctc": 0.0, "guide": 0.0, "diff": 0.0, "n": 0}
    brng = torch.Generator().manual_seed(args.seed * 31 + step)
    model.train()
    for batch in loader:
        # Counted from this run's start: a continuation (--init) once got no warm-up at all, because its global
        # step was already past --warmup, and a fresh AdamW at full rate wrecked the weights in a few steps.
        lr = args.lr * (1.0 if warm_from is None else min(1.0, (step - warm_from + 1) / args.warmup))
        if args.decay_from is not None:
            frac = min(1.0, max(0.0, (step - args.decay_from) / args.decay_steps))
            lr += (args.decay_to - lr) * frac
        elif args.decay_frac:
            left = 1.0 - (time.time() - t0) / (args.hours * 3600)
            lr += (args.decay_to - lr) * min(1.0, max(0.0, 1.0 - left / args.decay_frac))
        for g in opt.param_groups:
            g["lr"] = lr
        pix, widths, tin, tgt = (torch.as_tensor(batch[k]).to(dev, non_blocking=True) for k in ("pixels", "widths", "tokens", "targets"))
        amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if args.amp else contextlib.nullcontext()
        with amp:
            blocks, block_len = None, 0
            if args.diffusion_weight > 0:
                # Block length varies per batch, so one model drafts any block length the engine asks for.
                block_len = int(torch.randint(args.block_min, args.block_max + 1, (1,), generator=brng))
                blocks = sample_blocks(tgt, args.diffusion_blocks, charset.EOS, brng).to(dev)
            lm_logits, ctc_logits, vm, attn, block_logits = model(pix, widths, tin, guide_layer=args.guide_layer,
                                                                 blocks=blocks, block_len=block_len)
        lm_logits, ctc_logits = lm_logits.float(), ctc_logits.float()
        attn = attn.float() if attn is not None else None
        lm = F.cross_entropy(lm_logits.reshape(-1, lm_logits.shape[-1]), tgt.reshape(-1), ignore_index=charset.PAD)
        lp = F.log_softmax(ctc_logits, -1).transpose(0, 1)  # V,B,C
        tl = (tgt != charset.PAD) & (tgt != charset.EOS)
        ctc = F.ctc_loss(lp, tgt.masked_fill(~tl, 0), vm.sum(1).long(), tl.sum(1), blank=charset.PAD,
                         zero_infinity=True)
        loss = lm + args.ctc_weight * ctc
        diff = torch.zeros(())
        if block_logits is not None:
            want = block_targets(tgt, blocks, block_len, charset.PAD)
            diff = F.cross_entropy(block_logits.float().reshape(-1, block_logits.shape[-1]), want.reshape(-1),
                                   ignore_index=charset.PAD)
            loss = loss + args.diffusion_weight * diff
        guide = torch.zeros(())
        if args.guide_weight > 0:
            # Attention guidance: head 0 of one layer is taught to look, for text position i, at the visual
            # token where the CTC head places character i (a window of +-1 token), so the AR path learns
            # where it is reading long before it would find out from the LM loss alone.
            tgts = [[c for c in row if c not in (charset.PAD, charset.EOS)] for row in tgt.tolist()]
            al = ctc_alignment(ctc_logits.detach(), vm, tgts)
            if al:
                rb, ri, rp = (torch.tensor(x, device=dev) for x in zip(*al))
                nv = attn.shape[-1]
                win = torch.stack([(rp + d).clamp(0, nv - 1) for d in (-1, 0, 1)], 1)
                mass = attn[rb[:, None], ri[:, None], win].sum(1)
                if block_logits is not None:
                    # The same guidance for mask blocks: the block row that predicts character j looks where
                    # the CTC head places j, so the blocks learn where in the line they are reading.
                    b, t = tgt.shape
                    where = torch.full((b, t + block_len + 2), -1, dtype=torch.long, device=dev)
                    where[rb, ri] = rp
                    want = (blocks[:, :, None] + torch.arange(1, block_len + 1, device=dev)[None, None]).reshape(b, -1)
                    vis_at = where.gather(1, want.clamp(max=where.shape[1] - 1))
                    br, bm = (vis_at >= 0).nonzero(as_tuple=True)
                    if len(br):
                        bp = vis_at[br, bm]
                        bwin = torch.stack([(bp + d).clamp(0, nv - 1) for d in (-1, 0, 1)], 1)
                        mass = torch.cat([mass, attn[br[:, None], (t + bm)[:, None], bwin].sum(1)])
                guide = -torch.log(mass + 1e-6).mean()
                acc["guided_rows"] = acc.get("guided_rows", 0) + len(set(rb.tolist())) / pix.shape[0]
                loss = loss + args.guide_weight * guide
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        seen += pix.shape[0]
        window_lines += pix.shape[0]
        acc["loss"] += loss.item(); acc["lm"] += lm.item(); acc["ctc"] += ctc.item(); acc["guide"] += guide.item(); acc["diff"] += diff.item(); acc["n"] += 1
        max_chars.value = curriculum(step, args.cur_start, args.cur_full, args.cur_ramp)
        if step % 50 == 0:
            dt = time.time() - window_t
            rec = {"step": step, "seen": seen, "loss": acc["loss"] / acc["n"], "lm": acc["lm"] / acc["n"],
                   "ctc": acc["ctc"] / acc["n"], "guide": acc["guide"] / acc["n"], "diff": acc["diff"] / acc["n"], "guided_rows": acc.get("guided_rows", 0) / acc["n"], "lr": lr, "lines_per_s": window_lines / dt,
                   "max_chars": max_chars.value, "minutes": (time.time() - t0) / 60}
            log.write(json.dumps(rec) + "\n"); log.flush()
            print(json.dumps(rec), flush=True)
            window_t, window_lines, acc = time.time(), 0, {"loss": 0.0, "lm": 0.0, "ctc": 0.0, "guide": 0.0, "diff": 0.0, "n": 0}
        if step % args.save_every == 0:
            save()
        if step % args.eval_every == 0:
            te = time.time()
            ar, ctc_cer, ex = evaluate(model, evalset)
            rec = {"step": step, "seen": seen, "eval_cer_ar": ar, "eval_cer_ctc": ctc_cer}
            if euro_set is not None:
                rec["eval_euro_cer_ar"], rec["eval_euro_cer_ctc"], _ = evaluate(model, euro_set)
            if args.diffusion_weight > 0:
                rec["eval_block8_accuracy"], rec["eval_block8_leading"] = evaluate_blocks(model, evalset)
            rec.update({"eval_seconds": time.time() - te, "examples": ex})
            log.write(json.dumps(rec) + "\n"); log.flush()
            print(json.dumps(rec), flush=True)
            window_t = time.time()
        if stop["now"] or time.time() - t0 > args.hours * 3600:
            break
    save()
    print(f"saved at step {step}", flush=True)
    for child in mp.active_children():  # the data workers loop forever; one blocked on a full pipe never exits
        child.terminate()
    os._exit(0)


if __name__ == "__main__":
    main()
