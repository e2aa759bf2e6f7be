/**
 * CTC drafting: the CTC head read the whole line in the vision pass; that reading is the draft. The drafter
 * keeps an anchor (how far into the CTC reading the committed text has got). When the verifier's bonus
 * disagrees with the reading, it re-anchors on the correction: the CTC reading had a wrong character
 * (substitution), an extra one (insertion) or missed one (deletion). A chain takes the likeliest anchor; a
 * tree offers all of them at once.
 *
 * Where the reading has lost its place inside a run of one repeated character or pair (leader dots, rules of
 * underscores, ". . . ."), the draft continues the run instead: the CTC head cannot emit a character on adjacent
 * frames, so it reads such runs short or as other letters, and the decoder was left to write them a token a forward.
 */
import type { Draft, Verdict } from '../draft.js';
import { type Drafter, type SequenceView, trieOf } from './drafter.js';

const MAX_ANCHORS = 3;
/** Suffix re-anchoring: the committed text's last 2..6 tokens, looked for within this far of the expected anchor. */
const SUFFIX_MIN = 2;
const SUFFIX_MAX = 6;
const SUFFIX_WINDOW = 12;
/** A run continues in the draft once its unit (one token, or two) has repeated this many times. */
const RUN_MIN = 4;
/** The drafter's confidence in a run's continuation (the draft-length policy learns what it is worth). */
const RUN_CONFIDENCE = 0.9;

export class CtcDrafter implements Drafter {
  readonly name = 'ctc';
  private readonly anchors = new Map<number, number[]>();
  /**
   * Sequences whose last draft from the reading was refused at its first token (the reading has lost its place),
   * and of those, the ones whose last draft continued a run instead: they stay lost until a draft from the reading
   * is kept again.
   */
  private readonly lost = new Set<number>();
  private readonly running = new Set<number>();

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
    if (this.runUnit(seq)) return Array<number>(k).fill(RUN_CONFIDENCE);
    const a = (this.anchors.get(seq.id) ?? [0])[0];
    const out: number[] = [];
    for (let i = a; out.length < k && i < seq.ctc.length; i++) out.push(seq.ctcProbs[i] ?? 0);
    if (out.length < k && a <= seq.ctc.length) out.push(seq.ctcProbs[seq.ctc.length - 1] ?? 1);
    return out;
  }

  /** The unit (1 or 2 tokens) of the run the committed text ends in, when the reading has lost its place there. */
  private runUnit(seq: SequenceView): number[] | null {
    if (!this.lost.has(seq.id)) return null;
    const t = seq.tokens;
    for (const period of [1, 2]) {
      const start = t.length - RUN_MIN * period;
      if (start < 0) continue;
      let run = true;
      for (let i = start; run && i < t.length; i++) run = t[i] === t[start + ((i - start) % period)];
      if (run && (period === 1 || t[start] !== t[start + 1])) return t.slice(start, start + period);
    }
    return null;
  }

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      if (seq.budget <= 0) return { tokens: [] };
      const unit = this.runUnit(seq);
      if (unit) {
        this.running.add(seq.id);
        return { tokens: Array.from({ length: seq.budget }, (_, i) => unit[i % unit.length]) };
      }
      this.running.delete(seq.id);
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

  observe(seq: SequenceView, draft: Draft, verdict: Verdict, committed: readonly number[]): void {
    if (!this.running.has(seq.id) && draft.tokens.length) {
      if (verdict.accepted.length) this.lost.delete(seq.id);
      else this.lost.add(seq.id);
    }
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
      for (
        let i = Math.max(0, expected - n - SUFFIX_WINDOW);
        i + n <= seq.ctc.length && i <= expected + SUFFIX_WINDOW;
        i++
      ) {
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
    this.lost.delete(seq.id);
    this.running.delete(seq.id);
  }
}
