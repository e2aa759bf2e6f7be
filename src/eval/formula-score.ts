/**
 * A formula reader's readings of held-out formula crops against their LaTeX: normalised-LaTeX exact match (the
 * share of crops whose tokens, normalised as latex-score.ts says, equal the truth's), the token edit distance over
 * the truth's tokens (corpus-wide), and the share whose reading renders (KaTeX).
 */
import { latexRenders } from '../document/formula.js';
import { normalLatex, tokenDistance } from './latex-score.js';

export interface FormulaScore {
  crops: number;
  /** Normalised-LaTeX exact match, 0 to 1. */
  exact: number;
  /** Token edits over the truths' tokens, corpus-wide. */
  tokenErrorRate: number;
  /** Readings KaTeX renders, 0 to 1. */
  renders: number;
}

export async function scoreFormulas(readings: readonly string[], truths: readonly string[]): Promise<FormulaScore> {
  let exact = 0;
  let edits = 0;
  let tokens = 0;
  let renders = 0;
  for (const [i, r] of readings.entries()) {
    const a = normalLatex(r);
    const b = normalLatex(truths[i]);
    const d = tokenDistance(a, b);
    if (d === 0) exact++;
    edits += d;
    tokens += b.length;
    if (await latexRenders(r)) renders++;
  }
  const n = Math.max(1, readings.length);
  return {
    crops: readings.length,
    exact: exact / n,
    tokenErrorRate: edits / Math.max(1, tokens),
    renders: renders / n,
  };
}
