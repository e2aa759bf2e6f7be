/**
 * Joint CTC/attention verification (the hybrid decoding of Watanabe et al. 2017, greedy): the token committed
 * at each position is the one maximising
 *   (1 - w) log p_decoder(c | text so far) + w log [P_ctc(text so far + c ...) / P_ctc(text so far ...)]
 * over the decoder's top candidates, where P_ctc(prefix ...) is the CTC head's probability that the line's
 * reading begins with that prefix (ctc/prefix.ts). The head reads the whole line in one pass and keeps its
 * place; the decoder, on long lines, can skip or repeat a stretch. Scoring both fixes most of those slips.
 *
 * Not lossless against greedy AR decoding: it decodes a different (measured, more accurate) target. It is
 * lossless against itself: any drafter's draft is kept exactly as far as it matches the joint choice, so every
 * drafter gives the text that joint decoding without a drafter gives.
 */
import type { Draft, RowLogits, Verdict } from '../draft.js';
import { CtcPrefixScorer, type PrefixState } from '../../ctc/prefix.js';
import type { VerifiedLine, Verifier } from './verifier.js';

export interface JointParams {
  /** w: the CTC head's share of the score. */
  ctcWeight: number;
}

/** The decoder's candidates per position; the CTC head re-ranks these. */
const CANDIDATES = 5;

interface LineState {
  scorer: CtcPrefixScorer;
  /** The prefix state of the line's committed text. */
  prefix: PrefixState;
}

export class JointVerifier implements Verifier {
  readonly name = 'joint';
  readonly lossless = false;
  readonly trees = false;
  private readonly lines = new Map<number, LineState>();

  constructor(
    readonly params: JointParams,
    private readonly eos: number,
    private readonly blank: number,
  ) {}

  private stateOf(line: VerifiedLine): LineState {
    let st = this.lines.get(line.id);
    if (!st) {
      const { logProbs, frames, vocab } = line.ctc();
      const scorer = new CtcPrefixScorer(logProbs, frames, vocab, this.blank);
      st = { scorer, prefix: scorer.initial() };
      this.lines.set(line.id, st);
    }
    return st;
  }

  /**
   * The joint choice after `prefix`, and the prefix state it leads to. Scored on raw logits: the decoder's
   * log-softmax normaliser is the same for every candidate, so it cannot change which one wins (working it out was
   * a fifth of the verifier's own time).
   */
  private choose(
    logits: Float32Array,
    scorer: CtcPrefixScorer,
    prefix: PrefixState,
  ): { token: number; next: PrefixState } {
    const top = topK(logits, CANDIDATES);
    const w = this.params.ctcWeight;
    let best = { token: top[0], next: prefix, score: -Infinity };
    for (const c of top) {
      // The CTC term is a log-ratio of nested probabilities, never above 0: a candidate whose decoder term alone
      // cannot beat the best so far is skipped, exactly (most positions score one candidate).
      if ((1 - w) * logits[c] <= best.score) break;
      const next = c === this.eos ? prefix : scorer.extend(prefix, c);
      const ctc = (c === this.eos ? scorer.end(prefix) : next.score) - prefix.score;
      const score = (1 - w) * logits[c] + w * ctc;
      if (score > best.score) best = { token: c, next, score };
    }
    return best;
  }

  verify(draft: Draft, logits: RowLogits, line: VerifiedLine): Verdict {
    if (draft.parents && draft.parents.some((p, i) => p !== i - 1)) {
      throw new Error('the joint verifier takes chains');
    }
    const st = this.stateOf(line);
    const accepted: number[] = [];
    let pick = this.choose(logits.at(0), st.scorer, st.prefix);
    for (let i = 0; i < draft.tokens.length && draft.tokens[i] === pick.token && pick.token !== this.eos; i++) {
      accepted.push(i);
      pick = this.choose(logits.at(i + 1), st.scorer, pick.next);
    }
    st.prefix = pick.next;
    return { accepted, bonus: pick.token };
  }

  release(lineId: number): void {
    this.lines.delete(lineId);
  }
}

/** Indices of the k largest values, largest first. */
function topK(x: Float32Array, k: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < x.length; c++) {
    if (out.length < k || x[c] > x[out[out.length - 1]]) {
      let i = Math.min(out.length, k - 1);
      out[i] = c;
      while (i > 0 && x[out[i]] > x[out[i - 1]]) {
        [out[i], out[i - 1]] = [out[i - 1], out[i]];
        i--;
      }
    }
  }
  return out;
}
