/**
 * How well a text fits a line as the CTC head sees it: the log-probability of all CTC paths that spell it (the
 * forward algorithm). The document layer weighs a PDF's text layer against the model's own reading with it.
 */

import type { VisualState } from '../vision/visual-state.js';

/** CTC log-likelihoods of a line's reading and of the text offered as evidence for it. */
export interface EvidenceFit {
  /** Of the line's decoded reading; of its CTC reading where it was too long to decode whole (read in pieces). */
  reading: number;
  evidence: number;
}

/**
 * log P(targets | frames) of row frames [offset, offset + frames * vocab) of `scores` (log-probabilities); -Infinity
 * where the frames are too few to spell it. The forward algorithm in probabilities, rescaled every frame (the log
 * of each frame's scale summed): as exact as the log domain at a fraction of its exp and log calls.
 */
export function ctcLogLikelihood(
  scores: Float32Array,
  offset: number,
  frames: number,
  vocab: number,
  targets: readonly number[],
  blank: number,
): number {
  const L = targets.length;
  if (!frames) return L ? -Infinity : 0;
  const S = 2 * L + 1;
  // Whether state s may skip the blank before it (two different labels in a row).
  const skip = new Uint8Array(S);
  for (let s = 3; s < S; s += 2) skip[s] = targets[s >> 1] !== targets[(s >> 1) - 1] ? 1 : 0;
  const p = new Float64Array(L);
  let prev = new Float64Array(S);
  let cur = new Float64Array(S);
  prev[0] = Math.exp(scores[offset + blank]);
  if (L) prev[1] = Math.exp(scores[offset + targets[0]]);
  let logScale = 0;
  const rescale = (a: Float64Array): boolean => {
    let sum = 0;
    for (let s = 0; s < S; s++) sum += a[s];
    if (!(sum > 0)) return false;
    for (let s = 0; s < S; s++) a[s] /= sum;
    logScale += Math.log(sum);
    return true;
  };
  if (!rescale(prev)) return -Infinity;
  for (let t = 1; t < frames; t++) {
    const row = offset + t * vocab;
    const pBlank = Math.exp(scores[row + blank]);
    for (let k = 0; k < L; k++) p[k] = Math.exp(scores[row + targets[k]]);
    for (let s = 0; s < S; s++) {
      let sum = prev[s];
      if (s >= 1) sum += prev[s - 1];
      if (skip[s]) sum += prev[s - 2];
      cur[s] = sum * (s & 1 ? p[s >> 1] : pBlank);
    }
    [prev, cur] = [cur, prev];
    if (!rescale(prev)) return -Infinity;
  }
  const end = L ? prev[S - 1] + prev[S - 2] : prev[0];
  return end > 0 ? logScale + Math.log(end) : -Infinity;
}

/**
 * How well a line's reading and a text offered for it fit row `row` of a visual state's CTC frames, both without
 * their spaces (`space`): a gap between letters is the weakest thing the frames see (`stab le`, `72/ 233`), and a
 * PDF's text layer knows its words.
 */
export function evidenceFit(
  vis: VisualState,
  row: number,
  reading: readonly number[],
  evidence: readonly number[],
  blank: number,
  space: number,
): EvidenceFit {
  const vocab = vis.ctcLogProbs.length / (vis.batch * vis.visual);
  let frames = 0;
  while (frames < vis.visual && vis.mask[row * vis.visual + frames] !== 0) frames++;
  const offset = row * vis.visual * vocab;
  const [r, e] = [reading, evidence].map((ids) => ids.filter((id) => id !== space));
  // The same letters (most lines of a good layer): they fit alike, nothing to weigh.
  if (r.length === e.length && r.every((id, i) => id === e[i])) return { reading: 0, evidence: 0 };
  const fit = (ids: readonly number[]): number => ctcLogLikelihood(vis.ctcLogProbs, offset, frames, vocab, ids, blank);
  return { reading: fit(r), evidence: fit(e) };
}
