/**
 * How sure the CTC head is of its own reading of a line: the mean log-probability of its best label on the
 * frames where that label is a character (blank frames say little: an upside-down line has confident gaps too).
 * The document layer compares a page's lines read upright and turned half round with it.
 */
import type { VisualState } from '../vision/visual-state.js';

/** Per row: mean log-probability of the emitted frames, and how many frames emitted a character. */
export function ctcConfidence(s: VisualState, blank: number): { logProb: number; frames: number }[] {
  const vocab = s.ctcLogProbs.length / (s.batch * s.visual);
  const out: { logProb: number; frames: number }[] = [];
  for (let b = 0; b < s.batch; b++) {
    let sum = 0;
    let frames = 0;
    for (let t = 0; t < s.visual; t++) {
      if (s.mask[b * s.visual + t] === 0) break;
      const off = (b * s.visual + t) * vocab;
      let best = 0;
      let max = -Infinity;
      for (let c = 0; c < vocab; c++) {
        if (s.ctcLogProbs[off + c] > max) {
          max = s.ctcLogProbs[off + c];
          best = c;
        }
      }
      if (best === blank) continue;
      sum += max;
      frames++;
    }
    out.push({ logProb: frames ? sum / frames : -Infinity, frames });
  }
  return out;
}
