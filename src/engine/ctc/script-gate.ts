/**
 * Whether a line is in a script the model reads, and if not, which. Given Hangul, Han, Arabic and the like, the
 * decoder still writes its own letters, token by token, until its length cap: garbage that costs more decoding than a
 * real line. The CTC head's frames say it first: a softmax probe on the mean of its per-frame distribution
 * (training/script_gate.py, trained on synthetic lines only) scores each line against each script it was fitted on.
 * Callers decide what a score means for a page (worker/page-script.ts); the engine reads a gated line by its CTC head
 * alone (LineTask.unreadGate).
 */
import * as z from 'zod';
import type { VisualState } from '../vision/visual-state.js';

const READ = 'read';
/** What a flagged line's script is called where the gate does not name scripts. */
export const UNNAMED = 'unknown';

const common = {
  floor: z.number().positive(),
  /** Lines with fewer real frames than this are too short to judge (a figure, a label): never gated. */
  minFrames: z.number().int().nonnegative(),
};

/** One class per script: `read` is every script the model reads, the others are named scripts it does not. */
const ClassGate = z
  .object({
    classes: z.array(z.string()).min(2),
    /** Per class, one weight per vocabulary entry, on log(mean CTC probability + floor). */
    weights: z.array(z.array(z.number())),
    bias: z.array(z.number()),
    ...common,
  })
  .passthrough()
  .refine(
    (g) => g.classes.includes(READ) && g.weights.length === g.classes.length && g.bias.length === g.classes.length,
    {
      message: 'a script gate needs a "read" class and one weight row and bias per class',
    },
  );

/** A bundle from before the classes: one logistic probe, read or not, the script unnamed. */
const BinaryGate = z
  .object({ weights: z.array(z.number()), bias: z.number(), ...common })
  .passthrough()
  .transform((g) => ({
    ...g,
    classes: [READ, UNNAMED],
    weights: [g.weights.map(() => 0), g.weights],
    bias: [0, g.bias],
  }));

export const ScriptGateSchema = z.union([ClassGate, BinaryGate]);
export type ScriptGate = z.infer<typeof ScriptGateSchema>;

/** A line's verdict: `unread` is a logit (above 0: more likely a script the model lacks), `script` the likeliest
 * of those. */
export interface ScriptVerdict {
  unread: number;
  script: string | null;
}

/** The verdict on a line too short to judge, or where there is no gate. */
export const UNJUDGED: ScriptVerdict = { unread: -Infinity, script: null };

/** The gate's verdict on row `row` of `s`, from the mean CTC distribution its vision pass took (CtcReading.mean). */
export function scriptVerdict(gate: ScriptGate, s: VisualState, row: number): ScriptVerdict {
  const mean = s.reads?.[row]?.mean;
  if (!mean || realFrames(s, row) < gate.minFrames) return UNJUDGED;
  const logs = Array.from(mean, (p) => Math.log(p + gate.floor));
  const zs = gate.weights.map((w, k) => w.reduce((acc, wc, c) => acc + wc * logs[c], gate.bias[k]));
  const read = gate.classes.indexOf(READ);
  let best = -1;
  let top = -Infinity;
  zs.forEach((v, k) => {
    if (k !== read && v > top) [best, top] = [k, v];
  });
  // log(sum of the unread classes' probabilities) - log(p(read)), stably.
  const rest = zs.reduce((acc, v, k) => (k === read ? acc : acc + Math.exp(v - top)), 0);
  return { unread: top + Math.log(rest) - zs[read], script: gate.classes[best] };
}

/** The gate's score alone (ScriptVerdict.unread); -Infinity on a line too short to judge or a state without it. */
export function unreadScore(gate: ScriptGate, s: VisualState, row: number): number {
  return scriptVerdict(gate, s, row).unread;
}

/** How many of row `row`'s frames are real (its mask is a prefix of ones). */
export function realFrames(s: VisualState, row: number): number {
  let n = 0;
  while (n < s.visual && s.mask[row * s.visual + n] !== 0) n++;
  return n;
}
