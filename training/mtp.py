"""The MTP drafter head (after FastMTP): one small block, shared across draft depths and applied recursively, fed
by the frozen base model's last hidden state and the token just decided. Unlike an LLM's MTP block it also looks
at the line: one cross-attention over the base's last-layer visual keys/values (already computed by the vision
pass, so drafting adds no vision work). It shares the base's token embedding, position embedding, final norm and
LM head, all frozen: only the block is trained.

    # train on the frozen base (resumes from RUN/mtp-last.pt), then export mtp.onnx into a bundle
    /usr/bin/python3 training/mtp.py train --base training/checkpoints/specula-line-base.pt --run training/runs/mtp --hours 0.5
    /usr/bin/python3 training/mtp.py export --base training/checkpoints/specula-line-base.pt --head training/runs/mtp/mtp.pt --bundle models/specula-line-base

Depth k (1-based) predicts token t+k+1 from depth k-1's state (depth 0 = the base's hidden state at t) and token
t+k. Training is teacher-forced over every position at once; as in P-MTP, depth k's loss at a position is
weighted by the head's own (detached) probability of having drafted depths 1..k-1 right there, so depth is
learnt where the path to it is reliable.

Two heads come from this file. `mtp` (FastMTP): depth 3. `pmtp` (P-MTP): a deeper look-ahead (--depth 8) with
P-MTP's curriculum over training time as well: depth k joins the loss gradually, deeper depths later
(--progressive-steps), so the shallow depths the deep ones stand on are learnt first.

    # the P-MTP head: starts from the mtp head's block, exported beside it as pmtp.onnx
    /usr/bin/python3 training/mtp.py train --base training/checkpoints/specula-line-base.pt --init training/checkpoints/specula-mtp-head.pt \
      --depth 8 --progressive-steps 240 --run training/runs/pmtp --hours 0.25
    /usr/bin/python3 training/mtp.py export --name pmtp --base training/checkpoints/specula-line-base.pt --head training/runs/pmtp/mtp.pt --bundle models/specula-line-base
"""
import argparse
import hashlib
import json
import math
import multiprocessing as mp
import os
import signal
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charset  # noqa: E402
from data import LineBatches  # noqa: E402
from model import NEG, ModelConfig, OCRModel, load_model  # noqa: E402

DEPTH = 3


class MTPHead(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d, self.h = cfg.d_model, cfg.n_heads
        self.dh = d // cfg.n_heads
        self.ln_h = nn.LayerNorm(d)
        self.ln_e = nn.LayerNorm(d)
        self.fuse = nn.Linear(2 * d, d)
        self.ln_q = nn.LayerNorm(d)
        self.q = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.ln_ff = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def step(self, h, e, vis_k, vis_v, vis_bias):
        """h, e [B,T,d] (previous state, embedding of the token just decided + its position);
        vis_k/v [B,H,V,dh] (the base's last layer); vis_bias [B,1,1,V]. Returns the next state [B,T,d]."""
        x = self.fuse(torch.cat([self.ln_h(h), self.ln_e(e)], dim=-1))
        b, t, _ = x.shape
        q = self.q(self.ln_q(x)).view(b, t, self.h, self.dh).transpose(1, 2)
        s = torch.matmul(q, vis_k.transpose(-1, -2)) / math.sqrt(self.dh) + vis_bias
        o = torch.matmul(torch.softmax(s, dim=-1), vis_v).transpose(1, 2).reshape(b, t, self.h * self.dh)
        x = x + self.out(o)
        return x + self.ff(self.ln_ff(x))


@torch.no_grad()
def base_states(base: OCRModel, pixels, widths, tokens, focal=()):
    """Teacher-forced base pass: the final hidden state at every text position [B,T,d] (after ln_f), the last
    layer's visual K/V [B,H,V,dh] and mask [B,V] as the engine's vision pass gives them, and (when focal layers
    are named) their mean attention from each text position over the visual tokens [B,T,V], else None."""
    vk, vv, _, vm = base.vision(pixels, widths)
    x, nv, _, probs = base.prefix_pass(pixels, widths, tokens, tuple(focal))
    att = torch.stack([probs[i][:, :, nv:, :nv].mean(1) for i in focal]).mean(0) if focal else None
    # The engine has the decoder's `hidden` output, which is after the final norm: train on exactly that.
    return base.ln_f(x[:, nv:]), vk[-1], vv[-1], vm, att


def routed_bias(att, vm, keep: float):
    """The routed drafter's view (after TIGER) as the engine builds it, approximately: per text position, the
    strongest visual tokens by the focal layers' attention (a third of the budget, each holding at least a tenth
    of the top's mass) and their neighbours, from 2 behind to 8 ahead. att [B,T,V], vm [B,V] -> bias [B,1,T,V]."""
    real = vm.sum(1)  # [B]
    fix_n = torch.ceil(keep * real / 3).clamp(min=2)  # [B]
    rank = torch.argsort(torch.argsort(-att, dim=-1), dim=-1)  # 0 = strongest
    top = att.max(-1, keepdim=True).values
    fix = ((rank < fix_n[:, None, None]) & (att >= 0.1 * top)).float()
    b, t, v = fix.shape
    # selected[j] if a fixation sits in j-8 .. j+2 (the window 2 behind to 8 ahead of it)
    sel = F.max_pool1d(F.pad(fix.reshape(b * t, 1, v), (8, 2)), 11, 1).reshape(b, t, v)
    allow = (sel > 0) & (vm[:, None, :] > 0)
    return torch.where(allow, 0.0, NEG)[:, None]


def head_logits(base: OCRModel, state):
    return base.lm_head(base.ln_f(state))


def curriculum_weight(k: int, step: int, progressive_steps: int, depth: int) -> float:
    """P-MTP's curriculum: depth k (1-based) enters the loss after (k-1)/depth of the progressive steps and
    reaches full weight 1/depth of them later; depth 1 counts from the start. 0 steps: every depth at once."""
    if progressive_steps <= 0 or k == 1:
        return 1.0
    span = progressive_steps / depth
    return float(min(1.0, max(0.0, (step - (k - 1) * span) / span)))


def mtp_loss(base, head, pixels, widths, tokens, targets, route: float = 0.0, focal=(2, 3), depth: int = DEPTH,
             weights=None):
    """tokens = [BOS, c1..cn] (+PAD), targets = [c1..cn, EOS] (+PAD). Depth k at position i predicts targets[i+k]
    from the state of depth k-1 and the embedding of targets[i+k-1] at position i+k. route > 0: the head sees only
    the routed share of the visual tokens chosen at position i (every depth drafted from there)."""
    h, vk, vv, vm, att = base_states(base, pixels, widths, tokens, focal if route > 0 else ())
    vis_bias = routed_bias(att, vm, route) if route > 0 else ((1.0 - vm) * NEG)[:, None, None, :]
    b, t = tokens.shape
    state = h
    # P-MTP's progressive weighting: depth k at a position counts as much as the head's (detached) probability
    # of having got depths 1..k-1 right there, i.e. of the draft surviving verification up to depth k.
    reach = torch.ones(b, t, device=tokens.device)
    total, parts = 0.0, []
    for k in range(1, depth + 1):
        wk = 1.0 if weights is None else weights[k - 1]
        if t - k <= 0 or wk <= 0:
            break
        # Depth k at position i: the depth k-1 state there, and the token decided at depth k-1 (targets[i+k-1], the
        # drafter's own guess at run time) at the position it will be fed (i+k); it predicts targets[i+k].
        prev = targets[:, k - 1 : t - 1]
        pos = torch.arange(k, t, device=tokens.device).clamp(max=base.cfg.max_text - 1)
        e = base.tok(prev) + base.txt_pos(pos)[None]
        bias = vis_bias[:, :, : t - k] if vis_bias.shape[2] > 1 else vis_bias
        state = head.step(state[:, : t - k], e, vk, vv, bias)
        want = targets[:, k:t]
        logits = head_logits(base, state)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), want.reshape(-1), ignore_index=charset.PAD, reduction="none").view(b, t - k)
        valid = (want != charset.PAD).float()
        reach = reach[:, : t - k]
        w = reach * valid
        loss = (ce * w).sum() / w.sum().clamp(min=1.0)
        total = total + wk * loss
        parts.append(float((ce * valid).sum() / valid.sum().clamp(min=1.0)))
        with torch.no_grad():
            p_true = torch.softmax(logits.float(), -1).gather(-1, want.clamp(min=0)[..., None])[..., 0]
            reach = reach * p_true
    return total, parts


def load_base(path, dev):
    base, _ = load_model(path, dev)
    cfg = base.cfg
    for p in base.parameters():
        p.requires_grad_(False)
    return base, cfg


def train(args):
    torch.set_num_threads(args.threads)
    os.makedirs(args.run, exist_ok=True)
    with open(os.path.join(args.run, "pid"), "w") as f:
        f.write(str(os.getpid()))
    dev = torch.device(args.device)
    base, cfg = load_base(args.base, dev)
    focal = tuple(json.load(open(args.focal))["best"]) if args.route > 0 else ()
    depth = args.depth
    head = MTPHead(cfg).to(dev)
    opt = torch.optim.AdamW(head.parameters(), lr=args.lr, weight_decay=0.01)
    last = os.path.join(args.run, "mtp-last.pt")
    step, seen = 0, 0
    if os.path.exists(last):
        st = torch.load(last, map_location=dev, weights_only=False)
        head.load_state_dict(st["head"])
        opt.load_state_dict(st["opt"])
        step, seen = st["step"], st["seen"]
        print(f"resumed at step {step}", flush=True)
    elif args.init:
        # Re-fit a head trained on an earlier base: its block starts from there, the optimiser afresh.
        st = torch.load(args.init, map_location=dev, weights_only=False)
        head.load_state_dict(st["head"])
        step, seen = st.get("step", 0), st.get("seen", 0)
        if st.get("depth", DEPTH) != depth:
            step, seen = 0, 0  # a deeper head starts its own curriculum from the shallower head's block
        print(f"initialised the head from {args.init} (step {step})", flush=True)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))

    def save():
        torch.save({"head": head.state_dict(), "opt": opt.state_dict(), "step": step, "seen": seen}, last + ".tmp")
        os.replace(last + ".tmp", last)
        torch.save({"head": {k: v.cpu() for k, v in head.state_dict().items()}, "step": step, "seen": seen, "base": args.base,
                    "depth": depth}, os.path.join(args.run, "mtp.pt"))

    max_chars = mp.Value("i", 120)
    ds = LineBatches(seed=4242 + step, max_chars=max_chars, pixel_budget=args.pixel_budget, max_batch=48, pool=384)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1, prefetch_factor=4, persistent_workers=True)
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    t0 = time.time()
    acc, n, lines = [0.0] * depth, 0, 0
    for batch in loader:
        pix, widths, tin, tgt = (batch[k].to(dev) for k in ("pixels", "widths", "tokens", "targets"))
        # A share of the batches routed: the one head serves `mtp` (whole line) and `routed` (a sparse view).
        routed = args.route > 0 and torch.rand(()).item() < args.route_share
        weights = [curriculum_weight(k, step, args.progressive_steps, depth) for k in range(1, depth + 1)]
        loss, parts = mtp_loss(base, head, pix, widths, tin, tgt, args.route if routed else 0.0, focal, depth, weights)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
        opt.step()
        step += 1
        seen += pix.shape[0]
        lines += pix.shape[0]
        for i, p in enumerate(parts):
            acc[i] += p
        n += 1
        if step % 25 == 0:
            dt = time.time() - t0
            rec = {"step": step, "seen": seen, "loss_by_depth": [a / n for a in acc], "depth_weights": weights, "lines_per_s": lines / dt, "minutes": dt / 60}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            acc, n = [0.0] * depth, 0
        if step % 100 == 0:
            save()
        if stop["now"] or time.time() - t0 > args.hours * 3600:
            break
    save()
    print(f"saved at step {step} ({seen} lines)", flush=True)
    os._exit(0)  # the loader's worker process would otherwise keep the interpreter alive


class MTPExport(nn.Module):
    """The exported contract, one depth: state [B,d] (depth 0: the decoder's `hidden` output at the position that
    decided `token`; deeper: the previous depth's next_state), token [B] (the token just decided), position [B]
    (where that token will be fed), vis_k/v [B,H,V,dh] (the base's last layer), vis_mask [B,V]
    -> logits [B,vocab] for the token after it, next_state [B,d]."""

    def __init__(self, base: OCRModel, head: MTPHead):
        super().__init__()
        self.base, self.head = base, head

    def forward(self, state, token, position, vis_k, vis_v, vis_mask):
        e = self.base.tok(token) + self.base.txt_pos(position)
        vis_bias = ((1.0 - vis_mask) * NEG)[:, None, None, :]
        nxt = self.head.step(state[:, None], e[:, None], vis_k, vis_v, vis_bias)[:, 0]
        return head_logits(self.base, nxt), nxt


def export(args):
    import onnx  # noqa: F401  (fail early when the exporter's dependency is missing)
    dev = torch.device("cpu")
    base, cfg = load_base(args.base, dev)
    st = torch.load(args.head, map_location=dev, weights_only=False)
    head = MTPHead(cfg)
    head.load_state_dict(st["head"])
    head.eval()
    m = MTPExport(base, head).eval()
    b, v = 2, 40
    dh = cfg.d_model // cfg.n_heads
    ex = (torch.randn(b, cfg.d_model), torch.tensor([40, 41]), torch.tensor([3, 5]), torch.randn(b, cfg.n_heads, v, dh),
          torch.randn(b, cfg.n_heads, v, dh), torch.ones(b, v))
    name = args.name
    path = os.path.join(args.bundle, f"{name}.onnx")
    torch.onnx.export(m, ex, path, input_names=["state", "token", "position", "vis_k", "vis_v", "vis_mask"],
                      output_names=["logits", "next_state"], opset_version=17,
                      dynamic_axes={"state": {0: "b"}, "token": {0: "b"}, "position": {0: "b"}, "vis_k": {0: "b", 2: "v"},
                                    "vis_v": {0: "b", 2: "v"}, "vis_mask": {0: "b", 1: "v"}, "logits": {0: "b"}, "next_state": {0: "b"}})
    with torch.no_grad():
        logits, nxt = m(*ex)
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    cfg_path = os.path.join(args.bundle, "config.json")
    conf = json.load(open(cfg_path))
    conf["files"][name] = {"path": f"{name}.onnx", "sha256": digest}
    conf["heads"][name] = True
    conf[name] = {"depth": st.get("depth", DEPTH), "steps": st.get("step"), "linesSeen": st.get("seen")}
    golden = json.load(open(os.path.join(args.bundle, conf["golden"])))
    import base64
    enc = lambda a: base64.b64encode(a.detach().numpy().astype("float32").tobytes()).decode()  # noqa: E731
    golden[name] = {"inputs": {"state": {"shape": list(ex[0].shape), "data": enc(ex[0])}, "token": [40, 41], "position": [3, 5],
                                "vis_k": {"shape": list(ex[3].shape), "data": enc(ex[3])}, "vis_v": {"shape": list(ex[4].shape), "data": enc(ex[4])},
                                "vis_mask": {"shape": list(ex[5].shape), "data": enc(ex[5])}},
                     "outputs": {"logits": {"shape": list(logits.shape), "data": enc(logits)}, "next_state": {"shape": list(nxt.shape), "data": enc(nxt)}}}
    json.dump(golden, open(os.path.join(args.bundle, conf["golden"]), "w"))
    json.dump(conf, open(cfg_path, "w"), indent=1)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--base", required=True)
    t.add_argument("--run", required=True)
    t.add_argument("--hours", type=float, default=0.5)
    t.add_argument("--init", help="a weights-only head checkpoint to start from (a head trained on an earlier base)")
    t.add_argument("--route", type=float, default=0.0, help="train the routed view too: the share of visual tokens kept")
    t.add_argument("--route-share", type=float, default=0.5, help="share of batches trained routed")
    t.add_argument("--focal", default="training/focal.json", help="focal_layers.py's report: the layers routing reads")
    t.add_argument("--depth", type=int, default=DEPTH, help="draft depths trained (mtp: 3; pmtp: deeper)")
    t.add_argument("--progressive-steps", type=int, default=0,
                   help="P-MTP curriculum: depths join the loss one after another over this many steps (0: all at once)")
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--pixel-budget", type=int, default=12000)
    t.add_argument("--device", default="cpu")
    e = sub.add_parser("export")
    e.add_argument("--base", required=True)
    e.add_argument("--head", required=True)
    e.add_argument("--bundle", required=True)
    e.add_argument("--name", choices=["mtp", "pmtp"], default="mtp", help="which drafter head of the bundle this is")
    args = ap.parse_args()
    train(args) if args.cmd == "train" else export(args)


if __name__ == "__main__":
    main()
