/**
 * Which lines of a page are display formulas, and whether the formula reader's LaTeX for one may stand.
 *
 * A line is put to the formula reader when the text reader's reading of it looks like mathematics, not prose: at
 * most two words of four or more letters, and a relation or an operator only formulas use (`=`, `≤`, `∑`, `∂`, a
 * Greek letter, a superscript digit); or, for a line set apart as a display formula is (its block's only line, or
 * a line taller than type), at most one such word and any operator or bracket: the text reader garbles what it
 * never learnt (an integral with its limits comes out as `{, roas - F0)~ Fen)`). The formula reader, trained on
 * text lines as well as formulas, reads a line that is text as text; only a reading with LaTeX markup (a control
 * word, a script, braces) makes the line a formula. A reading that does not render (KaTeX: unbalanced braces, an
 * unknown command) or that ran to the decoder's length cap is not emitted as LaTeX: the line keeps its text
 * reading, flagged, with a low confidence.
 */
type Katex = typeof import('katex').default;

// KaTeX (~50 ms to load) is loaded the first time a formula is checked, not when the server starts.
let katex: Promise<Katex> | null = null;

/**
 * Relations and operators that running text does not use, Greek letters, superscript and subscript digits (not `_`
 * or `^`: identifiers in code and in prose have them).
 */
export const MATH_SIGN = /[=≤≥≠≈≡∼∝∑∏∫∮√∂∇∞±∓×÷→↦∈∉⊂⊆∪∩∀∃\u0391-\u03a9\u03b1-\u03c9\u00b2\u00b3\u00b9\u2070-\u209c]/u;
/** What a garbled display formula still shows. */
const WEAK_SIGN = /[-+−–()[\]{}|/*<>]/u;
const LONG_WORD = /^\p{L}{4,}[.,;:]?$/u;
/**
 * LaTeX markup as the formula reader spells it: a control word, or a script with its braces (it braces every one:
 * `x_{i}`, never `x_i`, so an identifier such as `SESSION_USER` read back as text is not a formula).
 */
const MARKUP = /\\[A-Za-z]|[\^_]\{/;

/** The confidence a formula line that fell back to its text reading gets (at most). */
export const FALLBACK_CONFIDENCE = 0.2;

/**
 * Whether a line whose text reading is `text` should be read by the formula reader too; `alone`: it is set apart (its
 * block's only line, or taller than type).
 */
export function looksLikeFormula(text: string, alone = false): boolean {
  const t = text.trim();
  if (t.length < 2) return false;
  const words = t.split(/\s+/).filter((w) => LONG_WORD.test(w)).length;
  return (MATH_SIGN.test(t) && words <= 2) || (alone && WEAK_SIGN.test(t) && words <= 1);
}

/** Whether LaTeX renders (KaTeX parses it: every group closed, every command known). */
export async function latexRenders(latex: string): Promise<boolean> {
  katex ??= import('katex').then((m) => m.default);
  const k = await katex;
  try {
    k.renderToString(latex, { output: 'mathml', displayMode: true, throwOnError: true, strict: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The formula reader's mean token probability below which its LaTeX is not taken: the highest that keeps all but
 * one of the exact readings of the 600 held-out synthetic formula crops (training/formula.py --seed 909). The 0.5.1
 * bundle, on 0.5.1's crops: 0.92 keeps 292 of 293 (0.94 would keep 290) and leaves out 135 readings whose token
 * error is 0.50 on average (0.88 left out 88). The 0.5.0 bundle had 0.88 by the same rule (169 of 170).
 */
export const MIN_FORMULA_CONFIDENCE = 0.92;

export type FormulaVerdict = 'latex' | 'text' | 'fallback';

/**
 * What a candidate line is, given the formula reader's reading and the text reader's: 'latex' (a formula: emit the
 * LaTeX), 'text' (keep the text reading: the formula reader read text, or is unsure, or less sure than the text
 * reader, as on a line of code with an `=` in it) or 'fallback' (LaTeX that does not close or ran to the length
 * cap).
 */
export async function formulaVerdict(
  latex: string,
  capped: boolean,
  confidence = 1,
  textConfidence = 0,
): Promise<FormulaVerdict> {
  if (!MARKUP.test(latex) || confidence < MIN_FORMULA_CONFIDENCE || confidence <= textConfidence) return 'text';
  if (capped || !(await latexRenders(latex))) return 'fallback';
  return 'latex';
}
