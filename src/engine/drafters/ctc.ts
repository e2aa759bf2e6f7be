/**
 * CTC drafting: the CTC head read the whole line in the vision pass; that reading is the draft. The drafter
 * keeps an anchor (how far into the CTC reading the committed text has got). When the verifier's bonus
 * disagrees with the reading, it re-anchors on the correction: the CTC reading had a wrong character
 * (substitution), an extra one (insertion) or missed one (deletion). A chain takes the likeliest anchor; a
 * tree offers all of them at once.
 */
import type { Draft, Verdict } from '../draft.js';
import { type Drafter, type SequenceView, trieOf } from './drafter.js';

const MAX_ANCHORS = 3;
/** Suffix re-anchoring: the committed text's last 2..6 tokens, looked for within this far of the expected anchor. */
const SUFFIX_MIN = 2;
const SUFFIX_MAX = 6;
const SUFFIX_WINDOW = 12;

export class CtcDrafter implements Drafter {
  readonly name = 'ctc';
  private readonly anchors = new Map<number, number[]>();

  constructor(private readonly eos: number) {}

  private at(seq: SequenceView, i: number): number | undefined {
    return i < seq.ctc.length ? seq.ctc[i] : i === seq.ctc.length ? this.eos : undefined;
  }

  private chainFrom(seq: SequenceView, a: number): number[] {
    const out: number[] = [];
    for (let i = a; out.length < seq.budget; i++) {
      const t = this.at(seq, i);
      if (t === undefined) break;
      out.push(t);
      if (t === this.eos) break;
    }
    return out;
  }

  /**
   * The CTC head's probability for each character from the likeliest anchor on, and for the end of the line after
   * them that of the reading's last character (a line whose end is unclear may go on).
   */
  confidence(seq: SequenceView, k: number): number[] {
    const a = (this.anchors.get(seq.id) ?? [0])[0];
    const out: number[] = [];
    for (let i = a; out.length < k && i < seq.ctc.length; i++) out.push(seq.ctcProbs[i] ?? 0);
    if (out.length < k && a <= seq.ctc.length) out.push(seq.ctcProbs[seq.ctc.length - 1] ?? 1);
    return out;
  }

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      if (seq.budget <= 0) return { tokens: [] };
      // The first token is the fed one (already committed), so the reading's start is the anchor.
      const anchors = this.anchors.get(seq.id) ?? [0];
      if (!seq.tree || anchors.length === 1) {
        const tokens = this.chainFrom(seq, anchors[0]);
        // Each token's column: the frame the CTC head emitted it at (the line's end for EOS).
        const end = (seq.ctcFrames[seq.ctcFrames.length - 1] ?? 0) + 1;
        return { tokens, columns: tokens.map((_, i) => seq.ctcFrames[anchors[0] + i] ?? end) };
      }
      return trieOf(anchors.map((a) => this.chainFrom(seq, a)));
    });
  }

  observe(seq: SequenceView, _draft: Draft, _verdict: Verdict, committed: readonly number[]): void {
    const anchors = this.anchors.get(seq.id) ?? [0];
    const exact: number[] = [];
    const repaired: number[] = [];
    for (const a of anchors) {
      let m = 0;
      while (m < committed.length && this.at(seq, a + m) === committed[m]) m++;
      if (m === committed.length) {
        exact.push(a + m);
      } else if (m === committed.length - 1) {
        // Only the last committed token (the verifier's own) disagrees with the reading.
        const b = committed[m];
        if (this.at(seq, a + m + 1) === b) repaired.push(a + m + 2); // the reading had an extra character
        repaired.push(a + m + 1); // the reading had a wrong character
        repaired.push(a + m); // the reading missed this character
      }
    }
    // A correction none of the one-character hypotheses explains (the model skipped or repeated several
    // characters): re-anchor where the reading holds the longest suffix of the committed text, nearest to
    // where the reading was expected to be. Without it the anchor can trail the model by a fixed offset forever.
    const suffix = exact.length ? [] : this.suffixAnchors(seq, anchors[0] + committed.length);
    const next = [...new Set(exact.length ? exact : [...suffix, ...repaired])].slice(0, MAX_ANCHORS);
    // Lost entirely (several corrections in a row on a branch we dropped): realign on the last token.
    if (!next.length) {
      const last = committed[committed.length - 1];
      const i = seq.ctc.indexOf(last, Math.max(0, (anchors[0] ?? 0) - 2));
      next.push(i >= 0 ? i + 1 : Math.min(seq.ctc.length, seq.tokens.length));
    }
    this.anchors.set(seq.id, next);
  }

  /** Anchors just after the longest suffix (2..6 tokens) of the committed text found in the reading near `expected`. */
  private suffixAnchors(seq: SequenceView, expected: number): number[] {
    const text = seq.tokens;
    for (let n = Math.min(SUFFIX_MAX, text.length); n >= SUFFIX_MIN; n--) {
      const tail = text.slice(text.length - n);
      let best = -1;
      for (let i = Math.max(0, expected - n - SUFFIX_WINDOW); i + n <= seq.ctc.length && i <= expected + SUFFIX_WINDOW; i++) {
        let k = 0;
        while (k < n && seq.ctc[i + k] === tail[k]) k++;
        if (k === n && (best < 0 || Math.abs(i + n - expected) < Math.abs(best - expected))) best = i + n;
      }
      if (best >= 0) return [best];
    }
    return [];
  }

  release(seq: SequenceView): void {
    this.anchors.delete(seq.id);
  }
}
