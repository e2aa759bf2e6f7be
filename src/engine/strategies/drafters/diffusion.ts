/**
 * Diffusion drafting (after GravityOCR): the decoder itself, trained to fill a block of mask positions in
 * parallel (bidirectional inside the block), drafts the next block in the same forward that verifies this one.
 * The scheduler puts `lookahead` masks after the fed token and after each leaf of the draft, and a short block
 * after each token between, so that whatever the verifier keeps, the block after the last kept token saw
 * exactly the committed text: its slots draft what follows the verifier's bonus, starting with the most
 * reliable one (slot 0; the later slots are much less often right). Without the short blocks (`inner: 0`),
 * after a rejection the fed token's block drafts on from its slot past the kept tokens.
 *
 * `dual-diffusion` (after D²SD) adds, at the draft's least confident positions (its likely rejection points),
 * a branch taking the runner-up token there with the rest of the draft after it, so a tree verifier can keep
 * the alternative in the same forward; every branch's leaf carries its own mask block, so the continuation
 * after an accepted alternative is re-drafted from that alternative prefix in the same batched pass.
 */
import { argmax, type Draft, type ForwardView, probability, type Verdict } from '../draft.js';
import { type Drafter, type SequenceView, trieOf } from './drafter.js';

/**
 * Masks after each inner token of a draft. Two: on 100 synthetic lines (not the evaluation set), diffusion with
 * auto draft lengths, 0/1/2/3 gave 2.29/2.41/2.50/2.39 tokens per forward at batch 1 (time within noise) and
 * 2.37/2.44/2.52/2.43 at batch 32 (2 the fastest, 9% under 0); a trained block's slots past the second are
 * right too rarely to pay for the width. dual-diffusion + tree, batch 1: 2.72 to 3.11 at length 8, 2.85 to
 * 3.08 with auto lengths.
 */
const INNER_BLOCK = 2;

export interface DiffusionOptions {
  /** dual-diffusion: alternatives offered at this many low-confidence positions (0: plain diffusion). */
  branches?: number;
  /** Positions at least this confident are not worth an alternative. */
  branchBelow?: number;
  /** Masks after each inner token of a draft (the blocks after its leaves are as long as the draft). */
  inner?: number;
}

/** A drafted position: the model's choice, its probability, and its runner-up. */
interface Slot {
  token: number;
  p: number;
  second: number;
}

function slotOf(logits: Float32Array): Slot {
  const token = argmax(logits);
  let second = token === 0 ? 1 : 0;
  for (let c = 0; c < logits.length; c++) if (c !== token && logits[c] > logits[second]) second = c;
  return { token, p: probability(logits, token), second };
}

export class DiffusionDrafter implements Drafter {
  readonly name: 'diffusion' | 'dual-diffusion';
  private readonly branches: number;
  private readonly branchBelow: number;
  private readonly inner: number;
  /** Per line: the next draft, read off the last forward's mask block. */
  private readonly next = new Map<number, Slot[]>();

  constructor(
    private readonly eos: number,
    opts: DiffusionOptions = {},
  ) {
    this.branches = opts.branches ?? 0;
    this.branchBelow = opts.branchBelow ?? 0.9;
    this.inner = opts.inner ?? INNER_BLOCK;
    this.name = this.branches > 0 ? 'dual-diffusion' : 'diffusion';
  }

  /** At most: k tokens per branch, blocks of k after the fed token and each leaf, short ones after the rest. */
  forwardWidth(k: number): number {
    const paths = 1 + this.branches;
    return k * paths + k * (1 + paths) + (k - 1) * paths * Math.min(k, this.inner);
  }

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      if (seq.budget <= 0) return { tokens: [] };
      const slots = this.chain(this.next.get(seq.id) ?? [], seq.budget);
      const main = slots.map((s) => s.token);
      // The block after this draft: as long as the draft may be, so a fully kept draft is followed by a full one.
      const lookahead = seq.budget;
      const blocks = { lookahead, lookaheadInner: this.inner };
      if (!this.branches || !seq.tree || !slots.length) return { tokens: main, ...blocks };
      const doubtful = slots
        .map((s, i) => ({ i, p: s.p }))
        .filter((x) => x.p < this.branchBelow && slots[x.i].second !== this.eos)
        .sort((a, b) => a.p - b.p)
        .slice(0, this.branches);
      if (!doubtful.length) return { tokens: main, ...blocks };
      const alternatives = doubtful.map(({ i }) => [...main.slice(0, i), slots[i].second, ...main.slice(i + 1)]);
      return { ...trieOf([main, ...alternatives]), ...blocks };
    });
  }

  /** The draft's slots up to the budget, ending at EOS. */
  private chain(slots: readonly Slot[], budget: number): Slot[] {
    const out: Slot[] = [];
    for (const s of slots) {
      if (out.length >= budget) break;
      out.push(s);
      if (s.token === this.eos) break;
    }
    return out;
  }

  observe(
    seq: SequenceView,
    draft: Draft,
    verdict: Verdict,
    _committed: readonly number[],
    forward: ForwardView,
  ): void {
    const last = verdict.accepted.length ? verdict.accepted[verdict.accepted.length - 1] : -1;
    const block = (node: number): Slot[] => forward.lookahead(node).map(slotOf);
    const exact = block(last);
    if (exact.length) {
      // The block after the last kept token (the fed token, when nothing was kept) saw exactly the committed text.
      this.next.set(seq.id, exact);
      return;
    }
    // Rejected before a leaf, after `kept` tokens: the block after the fed token saw only committed text; its
    // slot k is the token k + 2 places on, so from slot `kept` on it drafts what follows the new fed token.
    this.next.set(seq.id, block(-1).slice(verdict.accepted.length));
  }

  release(seq: SequenceView): void {
    this.next.delete(seq.id);
  }
}
