/**
 * CTC prefix scoring (Watanabe et al., "Hybrid CTC/Attention Architecture for End-to-End Speech Recognition",
 * 2017): the probability, under the CTC head's frame posteriors, that a line's reading *begins* with a given
 * text. It is what lets the CTC head vote on each token the decoder commits: the head reads the whole line at
 * once and does not lose its place, where the decoder, on long lines, sometimes does.
 *
 * A state holds, per frame t, the log-probability that the prefix is complete at t and its last frame is that
 * last character (rn) or a blank (rb). Those are only held over a window of frames: where the prefix can end
 * with a probability within e^-WINDOW of its likeliest ending frame (a few frames round where the head aligns it;
 * windowed scoring as ESPnet's CTC prefix scorer does it). Outside, they count as zero. Extending a state by one
 * character is O(its window), not O(frames): the full-width recursion spent the joint verifier's time on sums of
 * probabilities under e^-300, and its per-frame arrays on garbage collection.
 */

export interface PrefixState {
  /** The first frame of the window. */
  lo: number;
  /** log P(the prefix, ending at frame lo + i in its last character) */
  rn: Float64Array;
  /** log P(the prefix, ending at frame lo + i in a blank) */
  rb: Float64Array;
  /** log P(the line's reading begins with this prefix) (0 for the empty prefix) */
  score: number;
  /** The prefix's last character (-1: empty). */
  last: number;
}

/**
 * How far (in nats) below a state's likeliest frame a frame may fall and still be held. Dropping the rest changes
 * a score by under e^-WINDOW relative to the state's own probability, so a choice between candidates changes only
 * where the CTC head already gives a candidate under e^-WINDOW, with the decoder then deciding alone.
 */
export const WINDOW = 64;

/**
 * Beyond this gap, log(e^a + e^b) is the larger of the two to within 1e-16 relative (log1p(e^-37) < 1e-16, under
 * a float64's step at any |score| >= 1): the sum skips its exp and log1p.
 */
const NEGLIGIBLE = 37;

function logAdd(a: number, b: number): number {
  const d = a - b;
  if (d >= NEGLIGIBLE || b === -Infinity) return a;
  if (d <= -NEGLIGIBLE || a === -Infinity) return b;
  return d > 0 ? a + Math.log1p(Math.exp(-d)) : b + Math.log1p(Math.exp(d));
}

const EMPTY = new Float64Array(0);

export class CtcPrefixScorer {
  /**
   * The head's log-probabilities over the line's real frames, [frames, vocab]: a copy (the batch's arrays are reused).
   */
  private readonly logp: Float32Array;
  /** Scratch for a state being extended, [frames] each; the kept window is copied out. */
  private readonly rnAt: Float64Array;
  private readonly rbAt: Float64Array;

  /**
   * `logProbs`: the CTC head's log-probabilities for one line, [at least frames, vocab] (the vision pass makes them
   * from its logits: ctc/head.ts).
   */
  constructor(
    logProbs: Float32Array,
    readonly frames: number,
    readonly vocab: number,
    readonly blank: number,
  ) {
    this.logp = logProbs.slice(0, frames * vocab);
    this.rnAt = new Float64Array(frames);
    this.rbAt = new Float64Array(frames);
  }

  /** The empty prefix: no character yet, blanks only. */
  initial(): PrefixState {
    const rb = new Float64Array(this.frames);
    let acc = 0;
    let n = 0;
    // Blanks only from the first frame: the running sum only falls, so the window is its head.
    while (n < this.frames) {
      acc += this.logp[n * this.vocab + this.blank];
      if (n > 0 && acc < rb[0] - WINDOW) break;
      rb[n++] = acc;
    }
    return { lo: 0, rn: new Float64Array(n).fill(-Infinity), rb: rb.slice(0, n), score: 0, last: -1 };
  }

  /** The prefix followed by character `c`. */
  extend(s: PrefixState, c: number): PrefixState {
    const T = this.frames;
    const V = this.vocab;
    const sn = s.rn.length;
    if (T === 0 || sn === 0) return { lo: 0, rn: EMPTY, rb: EMPTY, score: -Infinity, last: c };
    const { logp, blank, rnAt, rbAt } = this;
    const repeat = s.last === c;
    const srn = s.rn;
    const srb = s.rb;
    const sLo = s.lo;
    // The new prefix can end no earlier than a frame after the old one can (or at frame 0, for a first character).
    let t = sLo + 1;
    let first = t;
    let rnPrev = -Infinity;
    let rbPrev = -Infinity;
    let psi = -Infinity;
    let max = -Infinity;
    if (s.last < 0) {
      rnPrev = logp[c];
      rbPrev = -Infinity;
      rnAt[0] = rnPrev;
      rbAt[0] = rbPrev;
      psi = rnPrev;
      max = rnPrev;
      first = 0;
    }
    for (let at = t * V; t < T; t++, at += V) {
      const k = t - 1 - sLo;
      let phi = -Infinity;
      if (k < sn) {
        // A repeated character needs a blank between its two occurrences.
        phi = repeat ? srb[k] : logAdd(srb[k], srn[k]);
      } else if (rnPrev < max - WINDOW && rbPrev < max - WINDOW) {
        // Past the old window nothing flows in, and the prefix's probability of being complete only falls.
        break;
      }
      const x = logp[at + c];
      const n = logAdd(rnPrev, phi) + x;
      const b = logAdd(rbPrev, rnPrev) + logp[at + blank];
      if (phi !== -Infinity) psi = logAdd(psi, phi + x);
      rnAt[t] = n;
      rbAt[t] = b;
      if (n > max) max = n;
      if (b > max) max = b;
      rnPrev = n;
      rbPrev = b;
    }
    // Keep the frames within WINDOW of the likeliest; the right end stays as computed so that end() can carry
    // it on to the last frame.
    let lo = first;
    while (lo < t && rnAt[lo] < max - WINDOW && rbAt[lo] < max - WINDOW) lo++;
    return { lo, rn: rnAt.slice(lo, t), rb: rbAt.slice(lo, t), score: psi, last: c };
  }

  /** log P(the line's reading is exactly this prefix): what ending it here (EOS) scores. */
  end(s: PrefixState): number {
    const T = this.frames;
    if (T === 0) return 0;
    const n = s.rn.length;
    if (n === 0) return -Infinity;
    let rn = s.rn[n - 1];
    let rb = s.rb[n - 1];
    // A window that stops short of the last frame: the prefix stays complete through blanks or its last
    // character repeated (what its recursion would give with nothing flowing in from before).
    for (let t = s.lo + n, at = t * this.vocab; t < T; t++, at += this.vocab) {
      const b = logAdd(rb, rn) + this.logp[at + this.blank];
      rn = s.last < 0 ? -Infinity : rn + this.logp[at + s.last];
      rb = b;
    }
    return logAdd(rn, rb);
  }
}
