/**
 * A block's lines as text: running text reflowed, list items, page numbers, code with its indentation, formulas as
 * inline math, and the mark an unreadable line shows.
 */
import type { LineOut } from './page-tree.js';
import { inlineFormula } from './markdown.js';

/** What an unreadable line shows in the markdown: a visible gap, never the reading it was not sure of. */
export const UNREADABLE_MARK = '⟦unreadable⟧';

export const LIST_MARK = /^\s*(?:[•·▪◦●‣∙*–-]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+/;
// Front-matter page numbers stay small: i..cccxcix (no d or m, so "MD" or "mid" are words, not pages).
const ROMAN = /^(?=[clxvi])c{0,3}(x[cl]|l?x{0,3})(i[xv]|v?i{0,3})$/;
const ARABIC_PAGE = /^\s*(?:page\s+)?\d{1,4}(?:\s*(?:of|\/)\s*\d{1,4})?\s*$/i;

/** "12", "Page 3 of 9", "iv", "XII" (a valid numeral in one case: "Mix" or "Did" are words). */
export function isPageNumber(text: string): boolean {
  const t = text.trim();
  if (ARABIC_PAGE.test(t)) return true;
  return (t === t.toLowerCase() || t === t.toUpperCase()) && ROMAN.test(t.toLowerCase());
}

/** Unreadable lines one after another are one gap in the text, not a row of marks. */
const MARK_RUN = new RegExp(`${UNREADABLE_MARK}(?:\\s+${UNREADABLE_MARK})+`, 'gu');

/** Join a block's lines into running text: a hyphen at a line end before a lower-case letter is a break. */
export function reflow(lines: readonly string[]): string {
  return joinLines(lines).replace(MARK_RUN, UNREADABLE_MARK);
}

function joinLines(lines: readonly string[]): string {
  let out = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (!out) {
      out = line;
    } else if (/[\p{L}]-$/u.test(out) && /^\p{Ll}/u.test(line)) {
      out = out.slice(0, -1) + line;
    } else {
      out += ' ' + line;
    }
  }
  return out;
}

/** Split a text block into list items where its lines start with list markers; null if it is not a list. */
export function listItems(lines: readonly LineOut[]): LineOut[][] | null {
  if (!lines.length || !LIST_MARK.test(lines[0].text)) return null;
  const items: LineOut[][] = [];
  for (const l of lines) {
    if (LIST_MARK.test(l.text) || !items.length) items.push([l]);
    else items[items.length - 1].push(l);
  }
  // One marker-looking line in a long paragraph ("1. The ...") is not a list.
  return items.length >= Math.ceil(lines.length / 3) ? items : null;
}

/** A line's text as the block writers take it: a formula's LaTeX marked as inline math. */
export const lineText = (l: LineOut): string => {
  if (l.unreadable) return UNREADABLE_MARK;
  if (l.formula === 'latex') return inlineFormula(l.text);
  if (!l.inline?.length) return l.text;
  let out = '';
  let at = 0;
  for (const f of l.inline) {
    out += l.text.slice(at, f.start) + inlineFormula(f.latex);
    at = f.end;
  }
  return out + l.text.slice(at);
};

export function meanConfidence(lines: readonly LineOut[]): number | null {
  const c = lines.map((l) => l.confidence).filter((x): x is number => x !== undefined);
  return c.length ? c.reduce((a, b) => a + b, 0) / c.length : null;
}

/** A line says whether it is monospace only with this many characters (monospace.ts). */
const JUDGED_CHARS = 8;

/**
 * A block of code: most of its lines that are long enough to tell are monospace, and not mere figures (tabular
 * digits are fixed-width in most fonts).
 */
export function isCode(lines: readonly LineOut[]): boolean {
  const judged = lines.filter((l) => l.text.replace(/\s+/g, '').length >= JUDGED_CHARS);
  const code = judged.filter((l) => l.pitch && !/^[\d\s.,:;%()+\-/]*$/.test(l.text));
  return code.length > 0 && code.length >= 0.6 * judged.length;
}

/** A code block's text: each line as read, indented by its offset from the block's leftmost line, in characters. */
export function codeText(lines: readonly LineOut[]): string {
  const pitch =
    lines
      .map((l) => l.pitch ?? 0)
      .filter((p) => p > 0)
      .sort((a, b) => a - b)[0] ?? 0;
  const left = Math.min(...lines.map((l) => l.box.x));
  return lines
    .map(
      (l) =>
        (pitch ? ' '.repeat(Math.max(0, Math.round((l.box.x - left) / pitch))) : '') +
        (l.unreadable ? UNREADABLE_MARK : l.text.trimEnd()),
    )
    .join('\n');
}
