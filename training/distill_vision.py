"""A cheaper vision pass distilled from a trained line model: the student is the teacher with its stem swapped for
one with fewer channels per block (`--channels`), and with `--tower-ff N` a vision tower of its own (tower.py: the
teacher's layers with their feed-forward blocks cut to N units) in place of the decoder's layers for the visual
tokens. Only the stem, and the tower with its norm and CTC head, learn; the decoder's layers stay the teacher's. It is taught to give what the vision
pass hands the decoder: the teacher's visual tokens (mean squared error on the stem's output, scaled by the
teacher's own), through the teacher's frozen transformer the visual K/V of every layer (likewise), and the CTC
head's frames (KL divergence from the teacher's); optionally (`--lm-weight`) the LM head's teacher-forced
readings too, which costs the text pass. The decoder's layers and heads stay bit for bit the teacher's, so the
decoder graph, the MTP/P-MTP heads and the focal layers of the teacher's bundle still hold; the vision graph, its
int8 graph and the script gate (which reads the vision pass) are made again.

    nohup /usr/bin/python3 training/distill_vision.py --teacher training/checkpoints/specula-line-base.pt \\
        --run training/runs/stem --hours 1.5 > training/runs/stem.out 2>&1 &

Resumes from RUN/last.pt; stops cleanly on SIGTERM; RUN/weights.pt is a whole-model checkpoint (train.py's format)
that export.py and quantize.py take as they are. On a lent GPU: `--device cuda [--amp]` (training/gpu_vision.sh).
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
from data import LineBatches, as_is, held_out  # noqa: E402
from model import ModelConfig, OCRModel, load_model, visual_mask  # noqa: E402
from tower import tower_from_teacher  # noqa: E402
from train import evaluate  # noqa: E402

# What a student may learn: everything else is the teacher's, bit for bit (swap_vision.py checks it).
STUDENT_PARTS = ("stem.", "vision_layers.", "vision_ln_f.")


def tower_macs(cfg: ModelConfig) -> int:
    """Multiply-adds of the transformer layers the visual tokens pass through, per input column (a token per 4
    columns; the attention over the other tokens left out, as it grows with the line)."""
    d_ff = cfg.vision_d_ff or cfg.d_ff
    return int(cfg.n_layers * (4 * cfg.d_model * cfg.d_model + 2 * cfg.d_model * d_ff) / 4)


def stem_macs(channels, d: int = 192) -> int:
    """Multiply-adds of a stem per input column (32 px high): the cost this script trades accuracy against."""
    rows = [32, 16, 8, 8, 4]  # each block's input height
    cols = [1, 0.5, 0.25, 0.25, 0.25]  # each block's columns per input column
    macs, cin = 0, 1
    for c, r, w in zip(channels, rows, cols):
        macs += int(9 * cin * c * r * w)
        cin = c
    return macs + int(2 * cin * d * 0.25)


def scaled_mse(student, teacher, mask):
    """Mean squared error over the real visual tokens ([B,V,C] against [B,V,C], mask [B,V]), in units of the
    teacher's mean square: a tensor's error counts alike whatever its scale."""
    m = mask.float()
    scale = ((teacher ** 2).mean(-1) * m).sum() / m.sum()
    return (((student - teacher) ** 2).mean(-1) * m).sum() / m.sum() / scale.clamp(min=1e-8)


def kl(teacher_logits, student_logits, mask):
    """KL(teacher || student) per position, averaged over the positions `mask` keeps."""
    lt = F.log_softmax(teacher_logits.float(), -1)
    ls = F.log_softmax(student_logits.float(), -1)
    per = (lt.exp() * (lt - ls)).sum(-1)
    return (per * mask).sum() / mask.sum().clamp(min=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher", required=True, help="the trained line model (weights-only checkpoint)")
    ap.add_argument("--run", required=True)
    ap.add_argument("--channels", default="16,32,64,96,128", help="the student stem's channels per block")
    ap.add_argument("--init", help="a student's weights.pt to continue from (a fresh optimiser; its channels and tower win)")
    ap.add_argument("--tower-ff", type=int, default=0,
                    help="> 0: the visual tokens through a vision tower of their own with this feed-forward width")
    ap.add_argument("--tower-lr-scale", type=float, default=0.3, help="the tower's lr (and its CTC head's) against the stem's")
    ap.add_argument("--hours", type=float, default=1.5)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--decay-frac", type=float, default=0.4, help="cool down over the last FRAC of --hours ...")
    ap.add_argument("--decay-to", type=float, default=5e-5, help="... to this lr")
    ap.add_argument("--feat-weight", type=float, default=1.0, help="the stem's output against the teacher's")
    ap.add_argument("--kv-weight", type=float, default=1.0, help="every layer's visual K/V against the teacher's")
    ap.add_argument("--ctc-weight", type=float, default=1.0, help="the CTC head's frames against the teacher's")
    ap.add_argument("--lm-weight", type=float, default=0.0, help="the LM head's teacher-forced text against the teacher's")
    ap.add_argument("--feat-only-minutes", type=float, default=0.0,
                    help="first, this long on the stem's output alone (no pass through the transformer: 3x the lines)")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--pixel-budget", type=int, default=16000)
    ap.add_argument("--max-batch", type=int, default=48)
    ap.add_argument("--max-chars", type=int, default=120)
    ap.add_argument("--receipt-share", type=float, default=0.15)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda (fp32 with TF32 matrix products)")
    ap.add_argument("--amp", action="store_true", help="on cuda: bf16 autocast (the losses are taken in fp32)")
    ap.add_argument("--pool", type=int, default=0, help="lines the data generator keeps to batch from (0: 8 batches)")
    ap.add_argument("--pipe-batches", action="store_true",
                    help="send batches from the data workers through pipes (for machines with a small /dev/shm)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    os.makedirs(args.run, exist_ok=True)
    with open(os.path.join(args.run, "pid"), "w") as f:
        f.write(str(os.getpid()))
    teacher, tst = load_model(args.teacher)
    teacher.to(dev)
    for p in teacher.parameters():
        p.requires_grad_(False)
    student, cfg, init = make_student(teacher, args)
    student.to(dev)
    channels = list(cfg.stem_channels)
    learns = lambda name: name.startswith(STUDENT_PARTS) or (cfg.vision_d_ff and name.startswith("ctc_head."))
    # What the student had been taught before this run (--init): the counts the bundle records go on from there.
    prior = {k: init["stemDistilled"][k] for k in ("steps", "lines")} if init is not None else {"steps": 0, "lines": 0}
    for name, p in student.named_parameters():
        p.requires_grad_(bool(learns(name)))
    tower = [p for n, p in student.named_parameters() if p.requires_grad and not n.startswith("stem.")]
    groups = [{"params": list(student.stem.parameters()), "scale": 1.0}]
    if tower:
        groups.append({"params": tower, "scale": args.tower_lr_scale})
    opt = torch.optim.AdamW(groups, lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    trained = [p for g in groups for p in g["params"]]
    step, seen, spent = 0, 0, 0.0
    last = os.path.join(args.run, "last.pt")
    if os.path.exists(last):
        st = torch.load(last, map_location=dev, weights_only=False)
        student.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step, seen, spent = st["step"], st["seen"], st.get("seconds", 0.0)
        prior = st.get("prior", prior)
        print(f"resumed {last} at step {step}", flush=True)
    print(f"stem {channels}: {stem_macs(channels) / 1e3:.0f}k multiply-adds per column against the teacher's "
          f"{stem_macs(teacher.cfg.stem_channels) / 1e3:.0f}k; the visual tokens' layers {tower_macs(cfg) / 1e3:.0f}k "
          f"against {tower_macs(teacher.cfg) / 1e3:.0f}k; {sum(p.numel() for p in trained) / 1e3:.0f}k parameters learn",
          flush=True)

    t0 = time.time() - spent

    def save():
        torch.save({"model": student.state_dict(), "opt": opt.state_dict(), "step": step, "seen": seen,
                    "seconds": time.time() - t0, "prior": prior, "config": cfg.to_dict()}, last + ".tmp")
        os.replace(last + ".tmp", last)
        keep = {k: v for k, v in tst.items() if k not in ("model", "config", "step", "seen")}  # e.g. diffusion
        weights = os.path.join(args.run, "weights.pt")
        # step/seen stay the teacher's: everything the bundle says of its training but the stem is the teacher's.
        torch.save({**keep, "model": {k: v.detach().cpu() for k, v in student.state_dict().items()},
                    "step": tst.get("step", 0), "seen": tst.get("seen", 0), "config": cfg.to_dict(),
                    "stemDistilled": {"teacherStep": tst.get("step", 0), "steps": prior["steps"] + step,
                                      "lines": prior["lines"] + seen,
                                      "channels": channels, "towerFf": cfg.vision_d_ff}}, weights + ".tmp")
        os.replace(weights + ".tmp", weights)

    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))

    ds = LineBatches(seed=args.seed * 7919 + step, max_chars=mp.Value("i", args.max_chars), pixel_budget=args.pixel_budget,
                     max_batch=args.max_batch, pool=args.pool or max(384, 8 * args.max_batch), as_numpy=args.pipe_batches,
                     receipt_share=args.receipt_share)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args.workers, prefetch_factor=4,
                                         collate_fn=as_is if args.pipe_batches else None, persistent_workers=True)
    amp = (lambda: torch.autocast(device_type="cuda", dtype=torch.bfloat16)) if args.amp and dev.type == "cuda" \
        else contextlib.nullcontext
    evalset = held_out()
    if step == 0:
        ar, ctc_cer, _ = evaluate(teacher, evalset)
        teacher.eval()
        s_ar, s_ctc, _ = evaluate(student, evalset)  # where the student starts (a cut tower starts below its teacher)
        rec = {"step": 0, "teacher_eval_cer_ar": ar, "teacher_eval_cer_ctc": ctc_cer, "eval_cer_ar": s_ar,
               "eval_cer_ctc": s_ctc}
        print(json.dumps(rec), flush=True)
        with open(os.path.join(args.run, "log.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    feats = {}
    teacher.stem.register_forward_hook(lambda m, i, o: feats.__setitem__("t", o))
    student.stem.register_forward_hook(lambda m, i, o: feats.__setitem__("s", o))
    student.train()
    acc = {}  # each loss part's sum and count over the log window
    window_t, window_lines = time.time(), 0
    for batch in loader:
        elapsed = time.time() - t0
        left = 1.0 - elapsed / (args.hours * 3600)
        lr = args.lr * min(1.0, (step + 1) / args.warmup)
        lr += (args.decay_to - lr) * min(1.0, max(0.0, 1.0 - left / args.decay_frac))
        for g in opt.param_groups:
            g["lr"] = lr * g["scale"]
        pix, widths, tin, tgt = (torch.as_tensor(batch[k]).to(dev, non_blocking=True) for k in ("pixels", "widths", "tokens", "targets"))
        feat_only = elapsed < args.feat_only_minutes * 60
        if feat_only:  # the stems alone: no pass through the transformer
            with torch.no_grad(), amp():
                t_feat = teacher.stem(pix, widths)
            with amp():
                s_feat = student.stem(pix, widths)
            parts = {"feat": scaled_mse(s_feat.float(), t_feat.float(), visual_mask(widths, t_feat.shape[1]))}
            loss = parts["feat"]
        else:
            with torch.no_grad(), amp():
                t_k, t_v, t_ctc, vm = teacher.vision(pix, widths)
            with amp():
                s_k, s_v, s_ctc, _ = student.vision(pix, widths)
            parts = {"feat": scaled_mse(feats["s"].float(), feats["t"].float(), vm),
                     "kv": sum(scaled_mse(s.transpose(1, 2).flatten(2).float(), t.transpose(1, 2).flatten(2).float(), vm)  # [B,V,H*dh]
                               for sk, tk in ((s_k, t_k), (s_v, t_v)) for s, t in zip(sk, tk)) / (2 * len(t_k)),
                     "ctc": kl(t_ctc, s_ctc, vm)}
            if args.lm_weight > 0:
                with torch.no_grad(), amp():
                    t_lm = teacher(pix, widths, tin)[0]
                with amp():
                    s_lm = student(pix, widths, tin)[0]
                parts["lm"] = kl(t_lm, s_lm, (tgt != charset.PAD).float())
            weights = {"feat": args.feat_weight, "kv": args.kv_weight, "ctc": args.ctc_weight, "lm": args.lm_weight}
            loss = sum(weights[k] * v for k, v in parts.items())
            parts["loss"] = loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        step += 1
        seen += pix.shape[0]
        window_lines += pix.shape[0]
        for k, v in parts.items():
            total, n = acc.get(k, (0.0, 0))
            acc[k] = (total + float(v), n + 1)
        if step % args.log_every == 0:
            rec = {"step": step, "seen": seen, **{k: total / n for k, (total, n) in acc.items()},
                   "lr": lr, "lines_per_s": window_lines / (time.time() - window_t), "minutes": (time.time() - t0) / 60}
            log.write(json.dumps(rec) + "\n"); log.flush()
            print(json.dumps(rec), flush=True)
            acc = {}
            window_t, window_lines = time.time(), 0
        if step % args.save_every == 0:
            save()
        if step % args.eval_every == 0 and not feat_only:
            te = time.time()
            ar, ctc_cer, ex = evaluate(student, evalset)
            rec = {"step": step, "seen": seen, "eval_cer_ar": ar, "eval_cer_ctc": ctc_cer, "eval_seconds": time.time() - te,
                   "examples": ex}
            log.write(json.dumps(rec) + "\n"); log.flush()
            print(json.dumps(rec), flush=True)
            window_t = time.time()
        if stop["now"] or time.time() - t0 > args.hours * 3600:
            break
    save()
    print(f"saved at step {step}", flush=True)
    for child in mp.active_children():
        child.terminate()
    os._exit(0)


def make_student(teacher, args):
    """The student: the teacher's weights but the stem's (and, with a tower, the tower's), or --init's student.
    Returns (student, its config, --init's checkpoint or None)."""
    init = torch.load(args.init, map_location="cpu", weights_only=False) if args.init else None
    shape = {"stem_channels": tuple(int(c) for c in args.channels.split(",")), "vision_d_ff": args.tower_ff}
    if init is not None:  # its channels win; a stem-only student can grow a tower (--tower-ff)
        shape = {"stem_channels": tuple(init["config"]["stem_channels"]),
                 "vision_d_ff": init["config"].get("vision_d_ff", 0) or args.tower_ff}
    cfg = ModelConfig(**{**teacher.cfg.to_dict(), **shape})
    student = OCRModel(cfg)
    rest = {k: v for k, v in teacher.state_dict().items() if not k.startswith("stem.")}
    missing, unexpected = student.load_state_dict(rest, strict=False)
    if unexpected or any(not k.startswith(STUDENT_PARTS) for k in missing):
        raise SystemExit(f"the teacher does not fit the student: missing {missing}, unexpected {unexpected}")
    if cfg.vision_d_ff and not (init and any(k.startswith("vision_layers.") for k in init["model"])):
        tower_from_teacher(student, teacher)  # a student with a tower of its own brings it
    if init is not None:
        missing, _ = student.load_state_dict(init["model"], strict=False)
        if any(not k.startswith(("vision_layers.", "vision_ln_f.")) for k in missing):
            raise SystemExit(f"{args.init} does not fit the student: missing {missing}")
        print(f"student initialised from {args.init} ({init['stemDistilled']['lines']} lines distilled)", flush=True)
    return student, cfg, init


if __name__ == "__main__":
    main()
