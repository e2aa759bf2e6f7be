/**
 * Whether a line is in a script the model reads. Given Hangul, Han, Cyrillic, Arabic and the like, the decoder
 * still writes Latin, token by token, until its length cap: garbage that costs more decoding than a real line
 * (docling's four Korean pages took 0.85 s each against 0.46 for its other pages). The CTC head's frames say it
 * first: a logistic probe on the mean of its per-frame distribution (training/script_gate.py, trained on synthetic
 * lines only) scores each line. Callers decide what a score means for a page (worker/page-script.ts); the engine
 * reads a gated line by its CTC head alone (LineTask.unreadGate).
 */
import * as z from 'zod';
import type { VisualState } from '../vision/visual-state.js';

export const ScriptGateSchema = z
  .object({
    /** One weight per vocabulary entry, on log(mean CTC probability + floor); a positive score: not read. */
    weights: z.array(z.number()),
    bias: z.number(),
    floor: z.number().positive(),
    /** Lines with fewer real frames than this are too short to judge (a figure, a label): never gated. */
    minFrames: z.number().int().nonnegative(),
  })
  .passthrough();
export type ScriptGate = z.infer<typeof ScriptGateSchema>;

/**
 * The gate's score for row `row` of `s` (a logit: above 0, the line is more likely in a script the model lacks),
 * from the mean CTC distribution its vision pass took (CtcReading.mean); -Infinity on a line too short to judge,
 * or a state without it.
 */
export function unreadScore(gate: ScriptGate, s: VisualState, row: number): number {
  const mean = s.reads?.[row]?.mean;
  if (!mean || realFrames(s, row) < gate.minFrames) return -Infinity;
  let z = gate.bias;
  for (let c = 0; c < mean.length; c++) z += gate.weights[c] * Math.log(mean[c] + gate.floor);
  return z;
}

/** How many of row `row`'s frames are real (its mask is a prefix of ones). */
export function realFrames(s: VisualState, row: number): number {
  let n = 0;
  while (n < s.visual && s.mask[row * s.visual + n] !== 0) n++;
  return n;
}
