/** The vision pass: pixels -> per-layer visual K/V (once per crop) and CTC logits. */
import * as ort from 'onnxruntime-node';
import type { Bundle } from './bundle.js';
import type { PixelBatch } from './preprocess.js';

/** Visual K/V for a batch of rows, laid out [L, B, H, V, dh] as the decoder takes them. */
export interface VisualState {
  k: Float32Array;
  v: Float32Array;
  mask: Float32Array; // [B, V], 1 = real token
  ctcLogits: Float32Array; // [B, V, vocab]
  batch: number;
  visual: number; // V
}

export async function runVision(bundle: Bundle, px: PixelBatch): Promise<VisualState> {
  const h = bundle.config.image.height;
  const out = await bundle.vision.run({
    pixels: new ort.Tensor('float32', px.pixels, [px.batch, 1, h, px.width]),
    widths: new ort.Tensor('int64', px.widths, [px.batch]),
  });
  const k = out.vis_k;
  return {
    k: k.data as Float32Array,
    v: out.vis_v.data as Float32Array,
    mask: out.vis_mask.data as Float32Array,
    ctcLogits: out.ctc_logits.data as Float32Array,
    batch: px.batch,
    visual: Number(k.dims[3]),
  };
}

/** Keep only these rows of a visual state (finished sequences leave the batch). */
export function keepVisualRows(s: VisualState, rows: readonly number[], layers: number, heads: number, headDim: number): VisualState {
  const per = heads * s.visual * headDim;
  const nb = rows.length;
  const k = new Float32Array(layers * nb * per);
  const v = new Float32Array(k.length);
  for (let l = 0; l < layers; l++) {
    rows.forEach((r, i) => {
      const src = (l * s.batch + r) * per;
      const dst = (l * nb + i) * per;
      k.set(s.k.subarray(src, src + per), dst);
      v.set(s.v.subarray(src, src + per), dst);
    });
  }
  const mask = new Float32Array(nb * s.visual);
  const vocab = s.ctcLogits.length / (s.batch * s.visual);
  const ctc = new Float32Array(nb * s.visual * vocab);
  rows.forEach((r, i) => {
    mask.set(s.mask.subarray(r * s.visual, (r + 1) * s.visual), i * s.visual);
    ctc.set(s.ctcLogits.subarray(r * s.visual * vocab, (r + 1) * s.visual * vocab), i * s.visual * vocab);
  });
  return { k, v, mask, ctcLogits: ctc, batch: nb, visual: s.visual };
}

/** Greedy CTC reading of each row: collapse repeats, drop blanks. */
export function ctcGreedy(s: VisualState, blank: number): number[][] {
  const vocab = s.ctcLogits.length / (s.batch * s.visual);
  const rows: number[][] = [];
  for (let b = 0; b < s.batch; b++) {
    const seq: number[] = [];
    let prev = -1;
    for (let t = 0; t < s.visual; t++) {
      if (s.mask[b * s.visual + t] === 0) break;
      const off = (b * s.visual + t) * vocab;
      let best = 0;
      for (let c = 1; c < vocab; c++) if (s.ctcLogits[off + c] > s.ctcLogits[off + best]) best = c;
      if (best !== prev && best !== blank) seq.push(best);
      prev = best;
    }
    rows.push(seq);
  }
  return rows;
}

/** Rows of each state after those of the one before, all padded to the longest visual length. */
export function concatVisual(states: readonly VisualState[], layers: number, heads: number, headDim: number): VisualState {
  const V = Math.max(...states.map((s) => s.visual));
  const B = states.reduce((n, s) => n + s.batch, 0);
  const vocab = states[0].ctcLogits.length / (states[0].batch * states[0].visual);
  const k = new Float32Array(layers * B * heads * V * headDim);
  const v = new Float32Array(k.length);
  const mask = new Float32Array(B * V);
  const ctc = new Float32Array(B * V * vocab);
  let offset = 0;
  for (const s of states) {
    const tok = s.visual * headDim;
    for (let l = 0; l < layers; l++) {
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
      ctc.set(s.ctcLogits.subarray(r * s.visual * vocab, (r + 1) * s.visual * vocab), (offset + r) * V * vocab);
    }
    offset += s.batch;
  }
  return { k, v, mask, ctcLogits: ctc, batch: B, visual: V };
}
