"""Extend a line model to read multi-line regions (a region bundle; see region.py).

Starts from a line checkpoint: the line embeddings start at zero, so step 0 reads a one-line region exactly as
the line model reads the line. Loss: LM cross-entropy over the region sequence, CTC per line, and the CTC-guided
attention of train.py, which here also says which line a character is on. Resumable like train.py.

  nohup /usr/bin/python3 training/train_region.py --run training/runs/region \
      --init training/checkpoints/specula-line-base.pt --hours 1.5 > training/runs/region.out 2>&1 &
"""
import argparse
import json
import os
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from metrics import cer  # noqa: E402
from model import ModelConfig, OCRModel, ctc_alignment  # noqa: E402
from region import RegionBatches, causal_bias, collate_regions, greedy_regions, held_out_regions, region_visual  # noqa: E402


def evaluate(model, regions, batch: int = 8):
    """CER over held-out regions (lines joined by newlines), and the share whose line count came out right."""
    model.eval()
    hyps, refs, count_ok = [], [], 0
    order = sorted(range(len(regions)), key=lambda i: len(regions[i]))
    for s in range(0, len(order), batch):
        rs = [regions[i] for i in order[s: s + batch]]
        b = collate_regions(rs, model.cfg.max_text)
        out = greedy_regions(model, b, max_len=min(1000, sum(len(t) + 1 for t in max(b["line_texts"], key=len)) * 2 + 8))
        for got, want in zip(out, b["line_texts"]):
            hyps.append("\n".join(got))
            refs.append("\n".join(want))
            count_ok += len(got) == len(want)
    model.train()
    return cer(hyps, refs), count_ok / len(regions)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--init", help="a line (or region) weights-only checkpoint to start from")
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--decay-frac", type=float, default=0.4, help="cool down over the last FRAC of --hours ...")
    ap.add_argument("--decay-to", type=float, default=2e-5, help="... to this lr")
    ap.add_argument("--line-lr-mult", type=float, default=25.0,
                    help="the line embeddings' lr as a multiple of --lr: they start at zero beside position tables of "
                         "norm 0.7-3, and at the base lr they were still under 0.2 after 250 steps, too small to tell lines apart")
    ap.add_argument("--max-lines", type=int, default=8, help="the most lines a region bundle reads at once")
    ap.add_argument("--train-lines", type=int, default=6, help="regions of 1..N lines in training")
    ap.add_argument("--max-chars", type=int, default=80, help="characters per line in training")
    ap.add_argument("--pixel-budget", type=int, default=24000, help="sum over a batch of lines x padded width")
    ap.add_argument("--ctc-weight", type=float, default=0.5)
    ap.add_argument("--guide-weight", type=float, default=0.5)
    ap.add_argument("--guide-layer", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--save-every", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    os.makedirs(args.run, exist_ok=True)
    with open(os.path.join(args.run, "pid"), "w") as f:
        f.write(str(os.getpid()))
    last = os.path.join(args.run, "last.pt")
    step, seen, warm_from = 0, 0, 0
    if os.path.exists(last):
        st = torch.load(last, map_location="cpu", weights_only=False)
        cfg = ModelConfig(**st["config"])
    else:
        st = torch.load(args.init, map_location="cpu", weights_only=False)
        cfg = ModelConfig(**{**st["config"], "max_lines": st["config"].get("max_lines") or args.max_lines})
    model = OCRModel(cfg)
    missing, unexpected = model.load_state_dict(st["model"], strict=False)
    if unexpected or any(not k.endswith("_line.weight") for k in missing):
        raise SystemExit(f"checkpoint does not fit: missing {missing}, unexpected {unexpected}")
    line_params = [p for n, p in model.named_parameters() if n.endswith("_line.weight")]
    rest = [p for n, p in model.named_parameters() if not n.endswith("_line.weight")]
    opt = torch.optim.AdamW([{"params": rest, "mult": 1.0},
                             {"params": line_params, "mult": args.line_lr_mult, "weight_decay": 0.0}],
                            lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    if os.path.exists(last):
        opt.load_state_dict(st["opt"])
        step, seen, warm_from = st["step"], st["seen"], None
        print(f"resumed {last} at step {step}", flush=True)
    else:
        print(f"initialised from {args.init} (line step {st.get('step')})", flush=True)
    base_step = st.get("base_step", st.get("step")) if not os.path.exists(last) else st.get("base_step")

    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "seen": seen,
                    "config": cfg.to_dict(), "base_step": base_step}, last + ".tmp")
        os.replace(last + ".tmp", last)
        w = os.path.join(args.run, "weights.pt")
        torch.save({"model": {k: v.detach().cpu() for k, v in model.state_dict().items()}, "step": step,
                    "seen": seen, "config": cfg.to_dict(), "base_step": base_step,
                    "region": {"trainLines": args.train_lines, "maxChars": args.max_chars}}, w + ".tmp")
        os.replace(w + ".tmp", w)

    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))

    ds = RegionBatches(seed=args.seed * 7919 + step, max_lines=args.train_lines, max_chars=args.max_chars,
                       max_text=cfg.max_text, pixel_budget=args.pixel_budget)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1, prefetch_factor=4,
                                         collate_fn=lambda b: b, persistent_workers=True)
    evalset = held_out_regions(max_lines=args.train_lines, max_chars=args.max_chars)
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    t0 = time.time()
    acc = {"lm": 0.0, "ctc": 0.0, "guide": 0.0, "n": 0, "regions": 0}
    window = time.time()
    model.train()
    for b in loader:
        lr = args.lr * (1.0 if warm_from is None else min(1.0, (step - warm_from + 1) / args.warmup))
        left = 1.0 - (time.time() - t0) / (args.hours * 3600)
        lr += (args.decay_to - lr) * min(1.0, max(0.0, 1.0 - left / args.decay_frac))
        for g in opt.param_groups:
            g["lr"] = lr * g["mult"]
        tin, tgt, pos = b["tokens"], b["targets"], b["positions"]
        nb, t = tin.shape
        vk, vv, vm, ctc_logits, line_vm = region_visual(model, b)
        L, _, H, _, dh = vk.shape
        empty = torch.zeros(L, nb, H, 0, vk.shape[-1])
        logits, _, _, _, _, attn = model.decode(tin, pos, empty, empty, vk, vv, vm, causal_bias(nb, t, tin.device),
                                                attention_of=args.guide_layer)
        lm = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=charset.PAD)
        # CTC per real line.
        k = b["k"]
        real = b["widths"] > 0
        line_ids = [charset.encode(x)[: cfg.max_text - 2] for r in b["line_texts"] for x in r + [""] * (k - len(r))]
        rows = real.nonzero(as_tuple=True)[0]
        tl = max(1, max(len(line_ids[i]) for i in rows.tolist()))
        ltgt = torch.zeros(len(rows), tl, dtype=torch.long)
        for n, i in enumerate(rows.tolist()):
            ltgt[n, : len(line_ids[i])] = torch.tensor(line_ids[i], dtype=torch.long)
        lp = F.log_softmax(ctc_logits[rows], -1).transpose(0, 1)
        ctc = F.ctc_loss(lp, ltgt, line_vm[rows].sum(1).long(), torch.tensor([len(line_ids[i]) for i in rows.tolist()]),
                         blank=charset.PAD, zero_infinity=True)
        loss = lm + args.ctc_weight * ctc
        guide = torch.zeros(())
        if args.guide_weight > 0:
            # train.py's guidance, in region coordinates: the text index of line j's character i is its offset
            # in the sequence, and its visual token is j * V + the CTC position within the line.
            al = ctc_alignment(ctc_logits[rows].detach(), line_vm[rows], [line_ids[i] for i in rows.tolist()])
            if al:
                V = line_vm.shape[1]
                starts = {}
                for r, texts in enumerate(b["line_texts"]):
                    off = 0
                    for j in range(len(texts)):
                        starts[r * k + j] = off
                        off += len(line_ids[r * k + j]) + 1
                src_row = rows.tolist()
                rb = torch.tensor([src_row[a] // k for a, _, _ in al])
                ri = torch.tensor([starts[src_row[a]] + i for a, i, _ in al])
                rp = torch.tensor([(src_row[a] % k) * V + p for a, _, p in al])
                win = torch.stack([(rp + d).clamp(0, k * V - 1) for d in (-1, 0, 1)], 1)
                mass = attn[rb[:, None], ri[:, None], win].sum(1)
                guide = -torch.log(mass + 1e-6).mean()
                loss = loss + args.guide_weight * guide
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        seen += nb
        acc["lm"] += lm.item(); acc["ctc"] += ctc.item(); acc["guide"] += guide.item(); acc["n"] += 1; acc["regions"] += nb
        if step % 25 == 0:
            rec = {"step": step, "seen": seen, "lm": acc["lm"] / acc["n"], "ctc": acc["ctc"] / acc["n"],
                   "guide": acc["guide"] / acc["n"], "lr": lr, "regions_per_s": acc["regions"] / (time.time() - window),
                   "minutes": (time.time() - t0) / 60}
            log.write(json.dumps(rec) + "\n"); log.flush()
            print(json.dumps(rec), flush=True)
            acc = {"lm": 0.0, "ctc": 0.0, "guide": 0.0, "n": 0, "regions": 0}
            window = time.time()
        if step % args.save_every == 0:
            save()
        if step % args.eval_every == 0:
            te = time.time()
            c, lines_ok = evaluate(model, evalset)
            rec = {"step": step, "eval_region_cer": c, "eval_line_count_right": lines_ok, "eval_seconds": time.time() - te}
            log.write(json.dumps(rec) + "\n"); log.flush()
            print(json.dumps(rec), flush=True)
            window = time.time()
        if stop["now"] or time.time() - t0 > args.hours * 3600:
            break
    save()
    print(f"saved at step {step}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
