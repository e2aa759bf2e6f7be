/**
 * Focal pruning of visual tokens (training-free, after FastOCR): a decoder step attends only to the visual
 * tokens the previous step's focal layers looked at most, and their neighbours, like a reader's eye that fixates
 * and drifts right. Nothing is evicted: the full visual K/V stays, each step gathers the kept columns, so a later
 * step (or a refresh) can look anywhere again. A step whose committed token was uncertain, and every
 * REFRESH_EVERY-th step, attends to everything and re-anchors the selection.
 */
import type { FloatPool } from './float-pool.js';
import type { VisualState } from '../vision/visual-state.js';

/** Steps between full (unpruned) steps. */
export const REFRESH_EVERY = 16;
/** Below this probability of the committed token, the next step looks at everything. */
export const REFRESH_BELOW = 0.5;
/** Fewest tokens a pruned step keeps (very short lines are not worth pruning). */
export const MIN_KEPT = 6;
/**
 * Most rows (lines or regions still decoding) a pruned forward holds. Measured on 38 four-line regions (849 visual
 * tokens each), default decoding, keep 0.2, decode time against unpruned: 1.26-1.38x faster at batch 1, 1.11-1.18x
 * at 4, 1.21-1.30x at 8, 1.01-1.16x at 32; on the 64 longest docbank lines at batch 32, 0.95x. Wider forwards
 * gain nothing from it, so they attend to everything.
 */
export const MAX_PRUNED_ROWS = 8;

/** Real (unpadded) visual tokens of row r. */
export function realLength(vis: VisualState, r: number): number {
  let n = 0;
  for (let i = 0; i < vis.visual; i++) n += vis.mask[r * vis.visual + i] > 0 ? 1 : 0;
  return n;
}

/**
 * The next step's tokens from this step's attention: the strongest (up to a third of the budget) are fixations;
 * the rest goes to their neighbours, rightward first (the direction of reading), a little leftward, nearest first.
 */
export function nextSelection(
  indices: readonly number[],
  mass: readonly number[],
  real: number,
  keep: number,
): number[] {
  const k = Math.min(real, Math.max(MIN_KEPT, Math.ceil(keep * real)));
  if (k >= real) return Array.from({ length: real }, (_, i) => i);
  const order = indices.map((_, i) => i).sort((a, b) => mass[b] - mass[a]);
  const chosen = new Set<number>();
  // Fixations: the strongest tokens, at most a third of the budget, and only those holding a real share of the
  // attention (a flat tail is not where the eye is).
  const top = mass[order[0]] ?? 0;
  const fixations = order
    .slice(0, Math.max(1, Math.ceil(k / 3)))
    .filter((i, n) => n === 0 || mass[i] >= 0.1 * top)
    .map((i) => indices[i]);
  for (const f of fixations) chosen.add(f);
  for (let d = 1; chosen.size < k && d < real; d++) {
    for (const f of fixations) {
      if (chosen.size >= k) break;
      if (f + d < real) chosen.add(f + d);
    }
    for (const f of fixations) {
      if (chosen.size >= k) break;
      if (d <= 2 && f - d >= 0) chosen.add(f - d); // a little behind the eye, too
    }
  }
  // Still short (fixations at the right edge): fill from the strongest remaining.
  for (const i of order) {
    if (chosen.size >= k) break;
    chosen.add(indices[i]);
  }
  return [...chosen].sort((a, b) => a - b);
}

/**
 * What a pruned row attends to in a step that verifies a draft: the reader's selection (where the decoder is
 * looking, for the fed token's position) and every column from there to the last drafted token's and the next
 * character's, where the position after it looks. The forward attends to the union, so a token
 * drafted k characters ahead is scored with its own columns in view, not only with where the last step looked.
 * `columns`: each drafted token's column (the CTC drafter's); without them, the fixation shifted by `perChar`
 * columns per drafted depth.
 */
export function draftSelection(
  focal: readonly number[],
  fixation: number,
  depthOf: readonly number[],
  columns: readonly number[] | undefined,
  real: number,
  perChar: number,
): number[] {
  if (!depthOf.length) return [...focal];
  const chosen = new Set(focal);
  const reach = Math.max(2, Math.ceil(perChar));
  const at = depthOf.map((depth, i) => Math.round(columns?.[i] ?? fixation + depth * perChar));
  // One run from where the decoder reads to past the last drafted token, with no holes: a draft read from the
  // wrong place in the CTC reading (an insertion or a deletion there) must not leave the decoder's own place out.
  const from = Math.max(0, Math.min(fixation, ...at) - 6 * reach);
  const to = Math.min(real - 1, Math.max(fixation, ...at) + 2 * reach);
  for (let x = from; x <= to; x++) chosen.add(x);
  return [...chosen].sort((a, b) => a - b);
}

/**
 * Each new token's own visual window in a step that verifies a draft (issue 27: text-conditioned routing for
 * verification, with FastOCR's fixation reuse): the fed token keeps the reader's selection; drafted token j gets that
 * selection moved by how far right of where the decoder reads token j was read from (`columns`: the CTC drafter's
 * frame for each drafted token; without them, `perChar` columns per draft depth). Index 0 is the fed token, 1 + j
 * drafted token j, as the row's forward lays them out. Columns past the line's ends are pulled in to its edge.
 */
export function positionWindows(
  focal: readonly number[],
  fixation: number,
  depthOf: readonly number[],
  columns: readonly number[] | undefined,
  real: number,
  perChar: number,
): number[][] {
  const out: number[][] = [[...focal]];
  depthOf.forEach((depth, j) => {
    const shift = Math.round(columns?.[j] ?? fixation + depth * perChar) - fixation;
    const moved = new Set<number>();
    for (const c of focal) moved.add(Math.min(real - 1, Math.max(0, c + shift)));
    out.push([...moved].sort((a, b) => a - b));
  });
  return out;
}

/** The columns any of a row's windows holds: what its forward gathers. */
export function unionOf(windows: readonly (readonly number[])[]): number[] {
  const all = new Set<number>();
  for (const w of windows) for (const c of w) all.add(c);
  return [...all].sort((a, b) => a - b);
}

/**
 * The per-token visual mask [B, T, width] of a pruned forward over a gathered state: row r's new token i sees the
 * gathered slots of its own window (`windows[r][i]`; a row without windows, or a slot past its draft (padding, a
 * diffusion block), sees every slot its row gathered).
 */
export function positionMask(
  gathered: VisualState,
  cols: readonly (readonly number[])[],
  windows: readonly (readonly (readonly number[])[] | null)[],
  t: number,
): Float32Array {
  const width = gathered.visual;
  const mask = new Float32Array(gathered.batch * t * width);
  for (let r = 0; r < gathered.batch; r++) {
    const own = gathered.mask.subarray(r * width, (r + 1) * width);
    const slotOf = new Map(cols[r].map((c, j) => [c, j]));
    for (let i = 0; i < t; i++) {
      const at = (r * t + i) * width;
      const win = windows[r]?.[i];
      if (!win) {
        mask.set(own, at);
        continue;
      }
      for (const c of win) {
        const j = slotOf.get(c);
        if (j !== undefined) mask[at + j] = 1;
      }
    }
  }
  return mask;
}

/**
 * A visual state holding only each row's selected columns (null = all its real tokens), padded to the longest
 * selection with masked slots; `cols[r][j]` says which original column slot j of row r is.
 */
export function gatherVisual(
  vis: VisualState,
  selections: readonly (number[] | null)[],
  layers: number,
  heads: number,
  headDim: number,
  pool?: FloatPool,
): { state: VisualState; cols: number[][] } {
  const cols = selections.map((s, r) => s ?? Array.from({ length: realLength(vis, r) }, (_, i) => i));
  const width = Math.max(1, ...cols.map((c) => c.length));
  const b = vis.batch;
  const n = layers * b * heads * width * headDim;
  // The same two buffers every step (slots past a row's selection keep stale values: they are masked).
  const k = pool ? pool.scratch('gathered-k', n) : new Float32Array(n);
  const v = pool ? pool.scratch('gathered-v', n) : new Float32Array(n);
  const mask = new Float32Array(b * width);
  // A selection is a few runs of neighbouring columns (fixations and what follows them): one copy per run, not
  // one per column, or the copying costs more than the attention it saves.
  const runs = cols.map((c) => {
    const out: [number, number, number][] = []; // [first column, slot, length]
    for (let j = 0; j < c.length; j++) {
      const last = out[out.length - 1];
      if (last && c[j] === last[0] + last[2]) last[2]++;
      else out.push([c[j], j, 1]);
    }
    return out;
  });
  for (let l = 0; l < layers; l++) {
    for (let r = 0; r < b; r++) {
      for (let h = 0; h < heads; h++) {
        const src = ((l * b + r) * heads + h) * vis.visual * headDim;
        const dst = ((l * b + r) * heads + h) * width * headDim;
        for (const [c, j, n] of runs[r]) {
          k.set(vis.k.subarray(src + c * headDim, src + (c + n) * headDim), dst + j * headDim);
          v.set(vis.v.subarray(src + c * headDim, src + (c + n) * headDim), dst + j * headDim);
        }
      }
    }
  }
  cols.forEach((c, r) => c.forEach((_, j) => (mask[r * width + j] = 1)));
  return { state: { k, v, mask, ctcLogProbs: vis.ctcLogProbs, batch: b, visual: width }, cols };
}
