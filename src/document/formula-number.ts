/**
 * A display formula's number, `(3)` or `(2.14a)` set at the right of its line, kept apart from its LaTeX (a formula
 * reader reading it would make it part of the formula). Where the layout made the number a line of its own (the
 * gap before it as wide as a column's), the formula's block takes it and its block goes; where the number stayed
 * in the formula's line, it is found in the text reader's reading where its alignment puts a gap before it, and
 * cut off the crop the formula reader reads.
 */
import type { Glyph } from '../engine/ctc/align.js';
import { cropColumns, type LineCrop } from './crop-lines.js';
import { formulaMarkdown } from './markdown.js';
import type { BlockOut } from './page-tree.js';

const NUMBER_AT_END = /\(\s*(\d{1,3}(?:\.\d{1,3}){0,2}[a-z]?)\s*\)\s*$/u;
const NUMBER_ALONE = /^\s*\(\s*(\d{1,3}(?:\.\d{1,3}){0,2}[a-z]?)\s*\)\s*$/u;

/** The gap before the number, in line heights, below which `(3)` is the formula's own (`f(3)`), not its number. */
const MIN_GAP = 0.8;

export interface FormulaNumber {
  /** The number as printed within its brackets: `3`, `2.14a`. */
  number: string;
  /** The line crop left of the number, for the formula reader. */
  crop: LineCrop;
}

/**
 * The number at the end of a display formula's line, and the crop without it; null where the line has none, or
 * where its glyphs (the alignment of `text`) do not spell the text or set the number apart.
 */
export function formulaNumber(
  text: string,
  glyphs: readonly Glyph[] | undefined,
  crop: LineCrop,
): FormulaNumber | null {
  const m = NUMBER_AT_END.exec(text);
  if (!m || !glyphs || !text.slice(0, m.index).trim()) return null;
  if (glyphs.map((g) => g.char).join('') !== text) return null;
  let at = 0;
  let open = -1;
  for (const [i, g] of glyphs.entries()) {
    if (at === m.index) open = i;
    at += g.char.length;
  }
  const before = glyphs.slice(0, Math.max(0, open)).filter((g) => !/\s/u.test(g.char));
  if (open < 0 || !before.length) return null;
  const end = Math.max(...before.map((g) => g.x1));
  const start = glyphs[open].x0;
  if (start - end < MIN_GAP * crop.height) return null;
  return { number: m[1], crop: cropColumns(crop, 0, (end + start) / 2) };
}

/**
 * Blocks that are only a formula's number (`(3)`, one line, right of a formula block and level with it) taken into
 * that formula's block: its number, `\\tag{3}` in its markdown; the rest renumbered in reading order.
 */
export function takeFormulaNumbers(blocks: readonly BlockOut[]): BlockOut[] {
  const taken = new Set<BlockOut>();
  const numbered = blocks.map((f) => {
    if (f.type !== 'formula' || f.number || f.latex === undefined) return f;
    const mid = (b: BlockOut): number => b.box.y + b.box.height / 2;
    const alone = blocks.find(
      (b) =>
        !taken.has(b) &&
        b.lines.length === 1 &&
        (b.type === 'paragraph' || b.type === 'heading') &&
        NUMBER_ALONE.test(b.lines[0].text) &&
        b.box.x >= f.box.x + f.box.width &&
        mid(b) >= f.box.y &&
        mid(b) <= f.box.y + f.box.height,
    );
    if (!alone) return f;
    taken.add(alone);
    const number = NUMBER_ALONE.exec(alone.lines[0].text)?.[1] ?? '';
    return { ...f, number, markdown: formulaMarkdown(f.latex, number) };
  });
  return numbered.filter((b) => !taken.has(b)).map((b, order) => ({ ...b, order }));
}
