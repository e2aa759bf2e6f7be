/** The vision pass: pixels -> per-layer visual K/V (once per crop) and the CTC head's log-probabilities. */
import type { Bundle } from '../bundle/bundle.js';
import type { CtcReading } from '../ctc/head.js';
import type { FloatPool } from '../decode/float-pool.js';
import type { GrayCrop } from './preprocess.js';
import { chunkByColumns } from './chunks.js';
import type { VisionInput } from './runner.js';

/** Visual K/V for a batch of rows, laid out [L, B, H, V, dh] as the decoder takes them. */
export interface VisualState {
  k: Float32Array;
  v: Float32Array;
  mask: Float32Array; // [B, V], 1 = real token
  /** [B, V, vocab]: log-probabilities on each row's real frames (padding frames are never read). */
  ctcLogProbs: Float32Array;
  batch: number;
  visual: number; // V
  /**
   * Each row's greedy CTC reading, as the pass that made this state worked it out (absent on states built from others).
   */
  reads?: CtcReading[];
}

/**
 * The vision pass over `crops`, as runs of at most CHUNK_COLUMNS padded columns (vision/chunks.ts): one state per run,
 * their rows consecutive in the order given. Unchunked, a page's orientation check (its six longest lines, 1,100 px
 * each on a docbank page) grew the vision thread's arena by 77 MB for the rest of the run.
 */
export async function runVisionChunks(
  bundle: Bundle,
  input: { crops: readonly GrayCrop[]; lines?: readonly number[] },
): Promise<VisualState[]> {
  const { crops, lines } = input;
  return Promise.all(
    chunkByColumns(crops.map((c) => c.width)).map(async (rows) => {
      const out = await bundle.vision.run({
        crops: rows.map((r) => crops[r]),
        ...(lines ? { lines: rows.map((r) => lines[r]) } : {}),
      });
      return { ...out, batch: out.reads.length };
    }),
  );
}

/**
 * The vision pass over `input` as one state (runVisionChunks' rows joined). Packed pixels run as they are (the bundle's
 * golden check).
 */
export async function runVision(bundle: Bundle, input: VisionInput): Promise<VisualState> {
  if ('pixels' in input || !input.crops.length) {
    const out = await bundle.vision.run(input);
    return { ...out, batch: out.reads.length };
  }
  const states = await runVisionChunks(bundle, input);
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  return states.length === 1 ? states[0] : concatVisual(states, nLayers, nHeads, headDim);
}

/** A zeroed array, from the pool when there is one. */
function zeros(n: number, pool?: FloatPool): Float32Array {
  return pool ? pool.take(n) : new Float32Array(n);
}

/**
 * An array for K or V, from the pool when there is one, not zeroed: a row's slots past its visual length are
 * never written, and its mask keeps them out of attention (zeroing the batch's K/V on every rebuild was a twentieth
 * of the main thread's time on docbank pages).
 */
function kvArray(n: number, pool?: FloatPool): Float32Array {
  return pool ? pool.take(n, false) : new Float32Array(n);
}

/** Hand a visual state's arrays back to the pool they came from, once nothing reads them. */
export function releaseVisual(s: VisualState, pool: FloatPool): void {
  pool.give(s.k, s.v, s.mask, s.ctcLogProbs);
}

/**
 * Keep only these rows of a visual state (finished sequences leave the batch), trimmed to the widest kept row's
 * real tokens (a row's real tokens are a prefix): a batch whose widest line has left stops attending to its
 * padding. Over the docling pages, 37% of the visual positions the forwards attended to were padding.
 */
export function keepVisualRows(
  s: VisualState,
  rows: readonly number[],
  layers: number,
  heads: number,
  headDim: number,
  pool?: FloatPool,
): VisualState {
  let visual = 1;
  for (const r of rows) {
    let n = s.visual;
    while (n > 0 && s.mask[r * s.visual + n - 1] === 0) n--;
    visual = Math.max(visual, n);
  }
  const nb = rows.length;
  const k = kvArray(layers * nb * heads * visual * headDim, pool);
  const v = kvArray(k.length, pool);
  const tok = visual * headDim;
  for (let l = 0; l < layers; l++) {
    rows.forEach((r, i) => {
      if (visual === s.visual) {
        // Untrimmed: the row's heads are one block.
        const per = heads * tok;
        const src = (l * s.batch + r) * per;
        k.set(s.k.subarray(src, src + per), (l * nb + i) * per);
        v.set(s.v.subarray(src, src + per), (l * nb + i) * per);
        return;
      }
      for (let h = 0; h < heads; h++) {
        const src = ((l * s.batch + r) * heads + h) * s.visual * headDim;
        const dst = ((l * nb + i) * heads + h) * tok;
        k.set(s.k.subarray(src, src + tok), dst);
        v.set(s.v.subarray(src, src + tok), dst);
      }
    });
  }
  const mask = zeros(nb * visual, pool);
  const vocab = s.ctcLogProbs.length / (s.batch * s.visual);
  const ctc = zeros(nb * visual * vocab, pool);
  rows.forEach((r, i) => {
    mask.set(s.mask.subarray(r * s.visual, r * s.visual + visual), i * visual);
    ctc.set(s.ctcLogProbs.subarray(r * s.visual * vocab, (r * s.visual + visual) * vocab), i * visual * vocab);
  });
  // A row's CTC reading goes with it (trimming cuts only padding frames, so its frame numbers hold).
  const reads = s.reads;
  return { k, v, mask, ctcLogProbs: ctc, batch: nb, visual, ...(reads ? { reads: rows.map((r) => reads[r]) } : {}) };
}

/** Rows of each state after those of the one before, all padded to the longest visual length. */
export function concatVisual(
  states: readonly VisualState[],
  layers: number,
  heads: number,
  headDim: number,
  pool?: FloatPool,
): VisualState {
  const V = Math.max(...states.map((s) => s.visual));
  const B = states.reduce((n, s) => n + s.batch, 0);
  const vocab = states[0].ctcLogProbs.length / (states[0].batch * states[0].visual);
  const k = kvArray(layers * B * heads * V * headDim, pool);
  const v = kvArray(k.length, pool);
  const mask = zeros(B * V, pool);
  const ctc = zeros(B * V * vocab, pool);
  let offset = 0;
  for (const s of states) {
    const tok = s.visual * headDim;
    for (let l = 0; l < layers; l++) {
      if (s.visual === V) {
        // Rows as wide as the result: the state's whole layer is one block.
        const n = s.batch * heads * tok;
        const dst = (l * B + offset) * heads * tok;
        k.set(s.k.subarray(l * n, (l + 1) * n), dst);
        v.set(s.v.subarray(l * n, (l + 1) * n), dst);
        continue;
      }
      for (let r = 0; r < s.batch; r++) {
        for (let h = 0; h < heads; h++) {
          const src = ((l * s.batch + r) * heads + h) * tok;
          const dst = ((l * B + offset + r) * heads + h) * V * headDim;
          k.set(s.k.subarray(src, src + tok), dst);
          v.set(s.v.subarray(src, src + tok), dst);
        }
      }
    }
    for (let r = 0; r < s.batch; r++) {
      mask.set(s.mask.subarray(r * s.visual, (r + 1) * s.visual), (offset + r) * V);
      ctc.set(s.ctcLogProbs.subarray(r * s.visual * vocab, (r + 1) * s.visual * vocab), (offset + r) * V * vocab);
    }
    offset += s.batch;
  }
  // The rows' CTC readings go with them, where every state has its own (frame numbers hold: padding is appended).
  const reads = states.every((s) => s.reads) ? states.flatMap((s) => s.reads ?? []) : undefined;
  return { k, v, mask, ctcLogProbs: ctc, batch: B, visual: V, ...(reads ? { reads } : {}) };
}

/**
 * One row per region, from the rows of several vision passes: each region's lines' real visual tokens one after
 * another. A token's position and line are inside its K/V already (the vision pass added them), so neither the
 * order nor the padding between lines matters to attention; packed, a row's real tokens are a prefix, as for a line.
 */
export function gatherRegions(
  states: readonly VisualState[],
  members: readonly (readonly { state: number; row: number }[])[],
  layers: number,
  heads: number,
  headDim: number,
  pool?: FloatPool,
): VisualState {
  const realOf = (s: VisualState, r: number): number => {
    let n = 0;
    for (let t = 0; t < s.visual; t++) n += s.mask[r * s.visual + t];
    return n;
  };
  const reals = members.map((m) => m.map((x) => realOf(states[x.state], x.row)));
  const V = Math.max(1, ...reals.map((r) => r.reduce((a, b) => a + b, 0)));
  const B = members.length;
  const vocab = states[0].ctcLogProbs.length / (states[0].batch * states[0].visual);
  const k = kvArray(layers * B * heads * V * headDim, pool);
  const v = kvArray(k.length, pool);
  const mask = zeros(B * V, pool);
  const ctc = zeros(B * V * vocab, pool);
  members.forEach((m, b) => {
    let off = 0;
    m.forEach((x, j) => {
      const s = states[x.state];
      const n = reals[b][j];
      for (let l = 0; l < layers; l++) {
        for (let h = 0; h < heads; h++) {
          const src = ((l * s.batch + x.row) * heads + h) * s.visual * headDim;
          const dst = (((l * B + b) * heads + h) * V + off) * headDim;
          k.set(s.k.subarray(src, src + n * headDim), dst);
          v.set(s.v.subarray(src, src + n * headDim), dst);
        }
      }
      ctc.set(s.ctcLogProbs.subarray(x.row * s.visual * vocab, (x.row * s.visual + n) * vocab), (b * V + off) * vocab);
      mask.fill(1, b * V + off, b * V + off + n);
      off += n;
    });
  });
  return { k, v, mask, ctcLogProbs: ctc, batch: B, visual: V };
}
