/**
 * A formula reader's readings of held-out formula crops against their LaTeX: normalised-LaTeX exact match (the
 * share of crops whose tokens, normalised as latex-score.ts says, equal the truth's), the same by what KaTeX
 * typesets (the normalised MathML olmOCR-Bench's math facts compare: spellings that draw alike count alike), the
 * token edit distance over the truth's tokens (corpus-wide), and the share whose reading renders (KaTeX).
 */
import { latexRenders } from '../document/formula.js';
import { normalLatex, tokenDistance } from './latex-score.js';
import { mathMl } from './olmocr-math.js';

export interface FormulaScore {
  crops: number;
  /** Normalised-LaTeX exact match, 0 to 1. */
  exact: number;
  /** Readings whose KaTeX MathML is the truth's, 0 to 1 (a truth KaTeX cannot render is compared as tokens). */
  typesetExact: number;
  /** Token edits over the truths' tokens, corpus-wide. */
  tokenErrorRate: number;
  /** Readings KaTeX renders, 0 to 1. */
  renders: number;
}

/** Whether a reading draws as its truth does, by KaTeX's MathML; by tokens where the truth does not render. */
function sameTypeset(reading: string, truth: string, sameTokens: boolean): boolean {
  const t = mathMl(truth);
  return t === null ? sameTokens : mathMl(reading) === t;
}

export async function scoreFormulas(readings: readonly string[], truths: readonly string[]): Promise<FormulaScore> {
  let exact = 0;
  let typesetExact = 0;
  let edits = 0;
  let tokens = 0;
  let renders = 0;
  for (const [i, r] of readings.entries()) {
    const a = normalLatex(r);
    const b = normalLatex(truths[i]);
    const d = tokenDistance(a, b);
    if (d === 0) exact++;
    if (sameTypeset(r, truths[i], d === 0)) typesetExact++;
    edits += d;
    tokens += b.length;
    if (await latexRenders(r)) renders++;
  }
  const n = Math.max(1, readings.length);
  return {
    crops: readings.length,
    exact: exact / n,
    typesetExact: typesetExact / n,
    tokenErrorRate: edits / Math.max(1, tokens),
    renders: renders / n,
  };
}
