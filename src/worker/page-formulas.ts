/** A page's lines read again by the formula reader: display formulas whole, and runs of mathematics in prose lines. */
import type { LineCrop } from '../document/crop-lines.js';
import { formulaVerdict, type FormulaVerdict, looksLikeFormula } from '../document/formula.js';
import { formulaNumber } from '../document/formula-number.js';
import { inlineCandidates, type InlineFormula } from '../document/inline-formulas.js';
import type { PageLayout } from '../document/layout/analyze.js';
import type { LineReading } from '../engine/engine.js';
import type { UncheckedDecoding } from '../engine/strategies/options.js';
import type { FormulaReader, FormulaReading } from './formula-reader.js';

/** A line's formula reading and what it was judged to be (document/formula.ts). */
export interface FormulaRead {
  reading: FormulaReading;
  verdict: FormulaVerdict;
  /** The formula's number, set apart at the line's end and cut off what the formula reader read. */
  number?: string;
}

/**
 * Lines of a page that read like mathematics, read again by the formula reader (one batch per page): display
 * formulas whole, and runs of words within prose lines that read as mathematics, cut from their line's crop where
 * the alignment of its text puts them (document/inline-formulas.ts).
 */
export async function readFormulas(
  reader: FormulaReader | null | undefined,
  layout: PageLayout,
  lines: readonly LineReading[],
  crops: readonly LineCrop[],
  decoding: UncheckedDecoding | undefined,
  signal: AbortSignal,
): Promise<{ formulas: Map<number, FormulaRead>; inlineRead: Map<number, InlineFormula[]> }> {
  const formulas = new Map<number, FormulaRead>();
  const inlineRead = new Map<number, InlineFormula[]>();
  if (!reader) return { formulas, inlineRead };
  // Set apart as a display formula is: its block's only line, or a line taller than type (limits, fractions).
  const alone = layout.blocks.flatMap((b) =>
    b.lines.map(
      (l) =>
        (b.lines.length === 1 && (b.type === 'paragraph' || b.type === 'heading')) ||
        l.band.height >= 1.4 * layout.lineHeight,
    ),
  );
  const candidates = lines.flatMap((l, i) => (!l.unread && looksLikeFormula(l.text, alone[i]) ? [i] : []));
  const inline = inlineCandidates(lines, crops, new Set(candidates));
  if (!candidates.length && !inline.length) return { formulas, inlineRead };
  const numbered = candidates.map((i) => formulaNumber(lines[i].text, lines[i].glyphs, crops[i]));
  const whole = candidates.map((i, j) => numbered[j]?.crop ?? crops[i]);
  const read = await reader.read([...whole, ...inline.map((c) => c.crop)], decoding, signal);
  for (const [j, i] of candidates.entries()) {
    const verdict = await formulaVerdict(read[j].text, read[j].capped, read[j].confidence, lines[i].confidence);
    const number = numbered[j] ? { number: numbered[j].number } : {};
    formulas.set(i, { reading: read[j], verdict, ...number });
  }
  for (const [j, c] of inline.entries()) {
    const f = read[candidates.length + j];
    // Only LaTeX that renders, read with more confidence than the text reader read those words: anything else keeps
    // the words as read (a run of symbols the formula reader cannot close is text, not a flag on the whole line).
    if ((await formulaVerdict(f.text, f.capped, f.confidence, c.textConfidence)) !== 'latex') continue;
    const list = inlineRead.get(c.line) ?? [];
    list.push({ ...c, latex: f.text, confidence: f.confidence });
    inlineRead.set(c.line, list);
  }
  return { formulas, inlineRead };
}
