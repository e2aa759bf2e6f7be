/**
 * Where each character of a line's final text sits in its crop: the CTC head's frames force-aligned (Viterbi)
 * to the committed tokens, whichever drafter and verifier chose them. Each token gets the frames on which the
 * best alignment emits it; a frame is `visualStride` crop columns. Word boxes are made from these spans by the
 * document layer, which knows the crop's place on the page.
 */
import type { Tokenizer } from '../bundle/tokenizer.js';
import type { VisualState } from '../vision/visual-state.js';

/** One character of a line's text: its crop columns [x0, x1) and the probability the decoder gave it. */
export interface Glyph {
  char: string;
  x0: number;
  x1: number;
  prob: number;
}

/**
 * Frames [first, last] per target label, by the most probable CTC path that spells `targets` over `frames` frames
 * of row `row`; null when the frames are too few to spell it (a label repeated needs a blank between).
 * `scores`: the head's log-probabilities (raw logits would serve as well: every path crosses every frame once, so
 * the per-frame normaliser is common to all paths and cannot change which one is best).
 */
export function forceAlign(
  scores: Float32Array,
  offset: number,
  frames: number,
  vocab: number,
  targets: readonly number[],
  blank: number,
): { first: number; last: number }[] | null {
  const L = targets.length;
  if (!L) return [];
  const S = 2 * L + 1;
  let need = L;
  for (let i = 1; i < L; i++) if (targets[i] === targets[i - 1]) need++;
  if (frames < need) return null;
  const label = (s: number): number => (s & 1 ? targets[s >> 1] : blank);
  let prev = new Float64Array(S).fill(-Infinity);
  let cur = new Float64Array(S);
  // back[t * S + s]: how many states back the path came from (0, 1 or 2).
  const back = new Uint8Array(frames * S);
  prev[0] = scores[offset + blank];
  prev[1] = scores[offset + targets[0]];
  for (let t = 1; t < frames; t++) {
    const row = offset + t * vocab;
    // States that cannot be reached yet (too far along) or can no longer finish stay -Infinity through the max.
    for (let s = 0; s < S; s++) {
      let best = prev[s];
      let from = 0;
      if (s >= 1 && prev[s - 1] > best) {
        best = prev[s - 1];
        from = 1;
      }
      if (s >= 2 && s & 1 && targets[s >> 1] !== targets[(s >> 1) - 1] && prev[s - 2] > best) {
        best = prev[s - 2];
        from = 2;
      }
      cur[s] = best + scores[row + label(s)];
      back[t * S + s] = from;
    }
    [prev, cur] = [cur, prev];
  }
  let s = prev[S - 1] >= prev[S - 2] ? S - 1 : S - 2;
  if (prev[s] === -Infinity) return null;
  const spans = targets.map(() => ({ first: -1, last: -1 }));
  for (let t = frames - 1; t >= 0; t--) {
    if (s & 1) {
      const k = s >> 1;
      spans[k].first = t;
      if (spans[k].last < 0) spans[k].last = t;
    }
    s -= back[t * S + s];
  }
  return spans;
}

/** Frames a crop of `width` columns gives the vision pass (training/model.py visual_mask). */
export function framesOf(width: number, stride: number): number {
  return Math.ceil(width / stride);
}

/**
 * A finished line's glyphs, one list per crop (a region's lines in turn, split at the tokenizer's line break):
 * each text token force-aligned within its own crop's frames of the batch row `row`. When the frames cannot
 * spell the text (they always can for text the model read from them; the length cap aside), the crop's width is
 * shared out evenly, so every character still has a place.
 */
export function lineGlyphs(
  vis: VisualState,
  row: number,
  cropWidths: readonly number[],
  tokens: readonly number[],
  probs: readonly number[],
  tokenizer: Tokenizer,
  stride: number,
): Glyph[][] {
  const vocab = vis.ctcLogProbs.length / (vis.batch * vis.visual);
  const blank = tokenizer.special.ctcBlank;
  const perCrop: { ids: number[]; probs: number[] }[] = cropWidths.map(() => ({ ids: [], probs: [] }));
  let line = 0;
  tokens.forEach((id, i) => {
    if (id === tokenizer.lineBreak && cropWidths.length > 1) {
      line = Math.min(line + 1, cropWidths.length - 1);
      return;
    }
    if (!tokenizer.isText(id)) return;
    perCrop[line].ids.push(id);
    perCrop[line].probs.push(probs[i] ?? 0);
  });
  let frameAt = 0;
  return perCrop.map(({ ids, probs: p }, j) => {
    const frames = Math.min(framesOf(cropWidths[j], stride), vis.visual - frameAt);
    const spans = forceAlign(
      vis.ctcLogProbs,
      (row * vis.visual + frameAt) * vocab,
      Math.max(0, frames),
      vocab,
      ids,
      blank,
    );
    frameAt += frames;
    return ids.map((id, k) => {
      const span = spans?.[k];
      const x0 = span ? span.first * stride : (k * cropWidths[j]) / ids.length;
      const x1 = span ? (span.last + 1) * stride : ((k + 1) * cropWidths[j]) / ids.length;
      return { char: tokenizer.vocab[id], x0, x1: Math.min(x1, cropWidths[j]), prob: p[k] };
    });
  });
}
