/**
 * Formulas set within prose lines (`Then λg = λg′.`): which runs of a line's words read as mathematics, the
 * crop of each (its words' columns, where the engine's alignment of the line's text puts them) for the formula
 * reader, and the line with its LaTeX in place of those words. A display formula (a line of its own) is
 * formula.ts's; this is the rest.
 */
import type { Glyph } from '../engine/ctc/align.js';
import type { InlineFormulaOut, LineOut } from './page-tree.js';
import { cropColumns, type LineCrop } from './crop-lines.js';
import { MATH_SIGN } from './formula.js';
import type { Box } from './layout/ink.js';
import { glyphRun } from './word-boxes.js';

/**
 * A relation or a big operator: what makes a run of symbols within prose a formula rather than a name (`α-Gevrey`, `5
 * μm`).
 */
const RELATION = /[=<>≤≥≠≈≡∼∝∈∉⊂⊆→↦∑∏∫∮]/u;
/** A word of prose that a run of symbols does not take in: a word of three or more letters (`Then`, `for`). */
const PROSE_WORD = /\p{L}{3,}/u;
/** Short English words, never taken for an operand (a single letter is: it may be a variable). */
const SHORT_WORDS = new Set([
  'an',
  'as',
  'at',
  'be',
  'by',
  'do',
  'if',
  'in',
  'is',
  'it',
  'of',
  'on',
  'or',
  'so',
  'to',
  'up',
  'we',
  'us',
  'no',
  'he',
  'me',
  'my',
]);

/** Characters [start, end) of a line's text. */
export interface TextSpan {
  start: number;
  end: number;
}

/**
 * Runs of a prose line's words that read as a formula set in the text (`Then λg = λg′.`, `for some u ∈ R×`): words
 * that carry a mathematical sign, or are short (a variable, an operand, an operator), next to each other, holding
 * a relation or a big operator and something besides it. Sentence punctuation after the run stays outside it.
 * A line read as a display formula is not looked at (its whole crop goes to the formula reader).
 */
export function inlineFormulaSpans(text: string): TextSpan[] {
  const words = [...text.matchAll(/\S+/gu)].map((m) => ({ word: m[0], start: m.index, end: m.index + m[0].length }));
  const signed = (w: string): boolean => MATH_SIGN.test(w) || RELATION.test(w);
  const short = (w: string): boolean =>
    !PROSE_WORD.test(w) && !SHORT_WORDS.has(w.replace(/[.,;:]+$/u, '').toLowerCase());
  const out: TextSpan[] = [];
  let i = 0;
  while (i < words.length) {
    if (!signed(words[i].word) && !short(words[i].word)) {
      i++;
      continue;
    }
    let j = i;
    while (
      j + 1 < words.length &&
      (signed(words[j + 1].word) || short(words[j + 1].word)) &&
      !/[.;:]$/u.test(words[j].word)
    )
      j++;
    const run = words.slice(i, j + 1);
    i = j + 1;
    // A relation, and an operand beside it (`USER = ALICE` has none: the names are prose words, so the run is `=`).
    if (!run.some((w) => RELATION.test(w.word))) continue;
    if (run.length === 1 && !/[\p{L}\d].*[=<>≤≥≠≈≡∼∝∈∉⊂⊆→↦].*[\p{L}\d]|[∑∏∫∮]/u.test(run[0].word)) continue;
    const last = run[run.length - 1];
    const end = last.start + last.word.replace(/[.,;:]+$/u, '').length;
    if (end > run[0].start) out.push({ start: run[0].start, end });
  }
  return out;
}

/** A run of a line's words sent to the formula reader. */
export interface InlineCandidate {
  /** The line's index among the page's lines. */
  line: number;
  /** The run's characters in the line's text. */
  span: TextSpan;
  /** The run's words, by their order among the line's words. */
  first: number;
  last: number;
  /** The run's columns of the line crop, with some white either side (never into the next word). */
  crop: LineCrop;
  /** Its ink on the page. */
  box: Box;
  /** Mean probability the text reader gave its characters. */
  textConfidence: number;
}

/** A run the formula reader read as LaTeX that stands. */
export interface InlineFormula extends InlineCandidate {
  latex: string;
  confidence: number;
}

const wordCount = (text: string): number => text.match(/\S+/gu)?.length ?? 0;

/**
 * The runs of every prose line worth reading again as formulas. `skip`: lines already going to the formula reader
 * whole. A line needs its glyphs (the alignment of its text) spelling its text exactly, so that its words can be
 * found in its crop.
 */
export function inlineCandidates(
  lines: readonly { text: string; glyphs?: readonly Glyph[]; unread?: boolean }[],
  crops: readonly LineCrop[],
  skip: ReadonlySet<number>,
): InlineCandidate[] {
  const out: InlineCandidate[] = [];
  lines.forEach((line, i) => {
    const crop = crops[i];
    if (skip.has(i) || line.unread || !line.glyphs || !crop?.place) return;
    if (line.glyphs.map((g) => g.char).join('') !== line.text) return;
    // Each glyph's first character in the text (a glyph may spell more than one).
    const starts: number[] = [];
    let at = 0;
    for (const g of line.glyphs) {
      starts.push(at);
      at += g.char.length;
    }
    const glyphAt = (offset: number): number => {
      let g = 0;
      while (g + 1 < starts.length && starts[g + 1] <= offset) g++;
      return g;
    };
    for (const span of inlineFormulaSpans(line.text)) {
      const first = wordCount(line.text.slice(0, span.start));
      const last = first + wordCount(line.text.slice(span.start, span.end)) - 1;
      // The run's own characters: sentence punctuation after it is left out of its crop too.
      const run = glyphRun(crop, crop.place, line.glyphs, glyphAt(span.start), glyphAt(span.end - 1));
      if (!run) continue;
      // White round the ink as a formula crop has it: a quarter of the line's height, within the run's columns.
      const pad = Math.round(crop.height / 4);
      const from = Math.max(run.from, run.ink[0] - pad);
      const to = Math.min(run.to, run.ink[1] + pad);
      out.push({
        line: i,
        span,
        first,
        last,
        crop: cropColumns(crop, from, to),
        box: run.box,
        textConfidence: run.confidence,
      });
    }
  });
  return out;
}

/**
 * The line with each formula's `$latex$` in place of the words it was read from; its words (where asked for) with
 * each formula one word over its ink, as a display formula's is.
 */
export function withInlineFormulas(line: LineOut, found: readonly InlineFormula[]): LineOut {
  const sorted = [...found].sort((a, b) => a.span.start - b.span.start);
  let text = '';
  let at = 0;
  const inline: InlineFormulaOut[] = [];
  for (const f of sorted) {
    text += line.text.slice(at, f.span.start);
    const start = text.length;
    text += `$${f.latex}$`;
    inline.push({ start, end: text.length, latex: f.latex, box: f.box, confidence: f.confidence });
    at = f.span.end;
  }
  text += line.text.slice(at);
  const out: LineOut = { ...line, text, inline };
  if (line.words) {
    const words = [...line.words];
    for (const f of [...sorted].reverse()) {
      if (f.last >= words.length) continue;
      words.splice(f.first, f.last - f.first + 1, {
        text: f.latex,
        box: f.box,
        confidence: f.confidence,
        ...(words[f.first].chars ? { chars: [] } : {}),
      });
    }
    out.words = words;
  }
  return out;
}
