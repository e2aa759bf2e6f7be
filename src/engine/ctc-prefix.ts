/**
 * CTC prefix scoring (Watanabe et al., "Hybrid CTC/Attention Architecture for End-to-End Speech Recognition",
 * 2017): the probability, under the CTC head's frame posteriors, that a line's reading *begins* with a given
 * text. It is what lets the CTC head vote on each token the decoder commits: the head reads the whole line at
 * once and does not lose its place, where the decoder, on long lines, sometimes does.
 *
 * A state holds, per frame t, the log-probability that the prefix is complete at t and its last frame is that
 * last character (rn) or a blank (rb). Extending it by one character is O(frames).
 */

export interface PrefixState {
  /** log P(the prefix, ending at frame t in its last character) */
  rn: Float64Array;
  /** log P(the prefix, ending at frame t in a blank) */
  rb: Float64Array;
  /** log P(the line's reading begins with this prefix) (0 for the empty prefix) */
  score: number;
  /** The prefix's last character (-1: empty). */
  last: number;
}

/**
 * Beyond this gap, log(e^a + e^b) is the larger of the two to within 1e-16 relative (log1p(e^-37) < 1e-16, under
 * a float64's step at any |score| >= 1): most frames lie far from where the prefix is aligned, so most sums skip
 * the exp and log1p that cost the joint verifier most of its time.
 */
const NEGLIGIBLE = 37;

function logAdd(a: number, b: number): number {
  const d = a - b;
  if (d >= NEGLIGIBLE || b === -Infinity) return a;
  if (d <= -NEGLIGIBLE || a === -Infinity) return b;
  return d > 0 ? a + Math.log1p(Math.exp(-d)) : b + Math.log1p(Math.exp(d));
}

export class CtcPrefixScorer {
  /** log-softmax of the head's logits over the line's real frames, [frames, vocab]. */
  private readonly logp: Float32Array;

  /** `logits`: the CTC head's logits for one line, [at least frames, vocab]. */
  constructor(logits: Float32Array, readonly frames: number, readonly vocab: number, readonly blank: number) {
    // Index loops over the flat array: a subarray and an iterator per frame cost as much as the exps.
    const logp = new Float32Array(frames * vocab);
    for (let t = 0, row = 0; t < frames; t++, row += vocab) {
      let max = -Infinity;
      for (let c = row; c < row + vocab; c++) if (logits[c] > max) max = logits[c];
      let sum = 0;
      for (let c = row; c < row + vocab; c++) sum += Math.exp(logits[c] - max);
      const norm = max + Math.log(sum);
      for (let c = row; c < row + vocab; c++) logp[c] = logits[c] - norm;
    }
    this.logp = logp;
  }

  /** The empty prefix: no character yet, blanks only. */
  initial(): PrefixState {
    const rn = new Float64Array(this.frames).fill(-Infinity);
    const rb = new Float64Array(this.frames);
    let acc = 0;
    for (let t = 0; t < this.frames; t++) {
      acc += this.logp[t * this.vocab + this.blank];
      rb[t] = acc;
    }
    return { rn, rb, score: 0, last: -1 };
  }

  /** The prefix followed by character `c`. */
  extend(s: PrefixState, c: number): PrefixState {
    const T = this.frames;
    const V = this.vocab;
    const rn = new Float64Array(T);
    const rb = new Float64Array(T);
    if (T === 0) return { rn, rb, score: -Infinity, last: c };
    const { logp, blank } = this;
    const repeat = s.last === c;
    const srn = s.rn;
    const srb = s.rb;
    let rnPrev = s.last < 0 ? logp[c] : -Infinity;
    let rbPrev = -Infinity;
    rn[0] = rnPrev;
    rb[0] = rbPrev;
    let psi = rnPrev;
    for (let t = 1, at = V; t < T; t++, at += V) {
      // A repeated character needs a blank between its two occurrences.
      const phi = repeat ? srb[t - 1] : logAdd(srb[t - 1], srn[t - 1]);
      const x = logp[at + c];
      const n = logAdd(rnPrev, phi) + x;
      const b = logAdd(rbPrev, rnPrev) + logp[at + blank];
      psi = logAdd(psi, phi + x);
      rn[t] = n;
      rb[t] = b;
      rnPrev = n;
      rbPrev = b;
    }
    return { rn, rb, score: psi, last: c };
  }

  /** log P(the line's reading is exactly this prefix): what ending it here (EOS) scores. */
  end(s: PrefixState): number {
    const T = this.frames;
    return T === 0 ? 0 : logAdd(s.rn[T - 1], s.rb[T - 1]);
  }
}
