/**
 * Whether a line is in a script the model reads. Given Hangul, Han, Cyrillic, Arabic and the like, the decoder
 * still writes Latin, token by token, until its length cap: garbage that costs more decoding than a real line
 * (docling's four Korean pages took 0.85 s each against 0.46 for its other pages). The CTC head's frames say it
 * first: a logistic probe on the mean of its per-frame distribution (training/script_gate.py, trained on synthetic
 * lines only) scores each line. Callers decide what a score means for a page (worker/page-script.ts); the engine
 * reads a gated line by its CTC head alone (LineTask.unreadGate).
 */
import { z } from 'zod';
import type { VisualState } from './vision.js';

export const ScriptGateSchema = z.object({
  /** One weight per vocabulary entry, on log(mean CTC probability + floor); a positive score: not read. */
  weights: z.array(z.number()),
  bias: z.number(),
  floor: z.number().positive(),
  /** Lines with fewer real frames than this are too short to judge (a figure, a label): never gated. */
  minFrames: z.number().int().nonnegative(),
}).passthrough();
export type ScriptGate = z.infer<typeof ScriptGateSchema>;

/**
 * Per row of `s`: the mean CTC distribution over its real frames, and how many there were. The vision pass takes
 * the mean as it normalises the head's output (ctc-head.ts); a state built from others' rows has it worked out
 * here from the log-probabilities.
 */
export function meanCtcPosterior(s: VisualState, row: number): { mean: Float32Array | Float64Array; frames: number } {
  const vocab = s.ctcLogProbs.length / (s.batch * s.visual);
  const taken = s.reads?.[row]?.mean;
  if (taken) {
    let real = 0;
    while (real < s.visual && s.mask[row * s.visual + real] !== 0) real++;
    return { mean: taken, frames: real };
  }
  const mean = new Float64Array(vocab);
  let frames = 0;
  for (let t = 0; t < s.visual; t++) {
    if (s.mask[row * s.visual + t] === 0) break;
    const off = (row * s.visual + t) * vocab;
    for (let c = 0; c < vocab; c++) mean[c] += Math.exp(s.ctcLogProbs[off + c]);
    frames++;
  }
  if (frames) for (let c = 0; c < vocab; c++) mean[c] /= frames;
  return { mean, frames };
}

/** The gate's score for row `row` of `s` (a logit: above 0, the line is more likely in a script the model lacks). */
export function unreadScore(gate: ScriptGate, s: VisualState, row: number): number {
  const { mean, frames } = meanCtcPosterior(s, row);
  if (frames < gate.minFrames) return -Infinity;
  let z = gate.bias;
  for (let c = 0; c < mean.length; c++) z += gate.weights[c] * Math.log(mean[c] + gate.floor);
  return z;
}
