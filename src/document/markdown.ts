/**
 * Markdown for the text the model read, written by mdast-util-to-markdown from a syntax tree rather than pasted
 * together: the text is escaped wherever markdown would read it as syntax (`<Flav>` as raw HTML, `<8225@x>` as a
 * link, `*`, `_`, `#`, `|`, a leading `1.` or `---`), so that rendering the markdown shows exactly the text read.
 */
import type { Code, Heading, List, Nodes, Paragraph, PhrasingContent, Table } from 'mdast';
import { gfmTableToMarkdown } from 'mdast-util-gfm-table';
import { mathToMarkdown } from 'mdast-util-math';
import { toMarkdown } from 'mdast-util-to-markdown';

/** Between the pages of a multi-page document: a thematic break, which every CommonMark renderer keeps. */
export const PAGE_BREAK = '\n\n---\n\n';

/**
 * A formula inside running text (a table cell, a line of a paragraph) travels through reflow and cell joining
 * between these two private-use characters, and is written as inline math (`$...$`).
 */
const MATH_OPEN = '\uE000';
const MATH_CLOSE = '\uE001';
const INLINE = /\uE000([^\uE001]*)\uE001/g;

/** `latex` marked as an inline formula within text handed to the writers below. */
export function inlineFormula(latex: string): string {
  return MATH_OPEN + latex + MATH_CLOSE;
}

/** Text with its inline formulas as `$...$` (for outputs that are not markdown: HTML cells, JSON cells). */
export function withDollarMath(value: string): string {
  return value.replace(INLINE, (_, latex: string) => `$${latex}$`);
}

function text(value: string): PhrasingContent[] {
  if (!value) return [];
  if (!value.includes(MATH_OPEN)) return [{ type: 'text', value }];
  const out: PhrasingContent[] = [];
  let at = 0;
  for (const m of value.matchAll(INLINE)) {
    if (m.index > at) out.push({ type: 'text', value: value.slice(at, m.index) });
    out.push({ type: 'inlineMath', value: m[1] });
    at = m.index + m[0].length;
  }
  if (at < value.length) out.push({ type: 'text', value: value.slice(at) });
  return out;
}

function write(node: Nodes, math = false): string {
  return toMarkdown(node, {
    bullet: '-',
    listItemIndent: 'one',
    // Every `<` escaped, not only before a letter: `<8225@example.com>` is an e-mail autolink too.
    unsafe: [{ character: '<', inConstruct: 'phrasing' }],
    // (GFM renderers also link bare addresses such as a@b.co in text; no escape stops that, and the link's
    // text is the text read.)
    // Math syntax only where there is a formula: with it, every `$` of the text is escaped, and a page without
    // formulas keeps the markdown it always had.
    extensions: [gfmTableToMarkdown(), ...(math ? [mathToMarkdown()] : [])],
  }).replace(/\n+$/, '');
}

const hasMath = (value: string): boolean => value.includes(MATH_OPEN);

/** A display formula: `$$`, the LaTeX on its own line (its number as `\tag{3}`, as KaTeX shows it), `$$`. */
export function formulaMarkdown(latex: string, number?: string): string {
  return write({ type: 'math', value: number ? `${latex}\\tag{${number}}` : latex }, true);
}

export function paragraphMarkdown(value: string): string {
  const p: Paragraph = { type: 'paragraph', children: text(value) };
  return write(p, hasMath(value));
}

/** A code block: fenced, its lines as they are (indentation kept, nothing escaped). */
export function codeMarkdown(value: string): string {
  const code: Code = { type: 'code', value };
  return write(code);
}

/** A block's markdown set apart as a block quote (a boxed note): every line behind `> `. */
export function quoteMarkdown(markdown: string): string {
  return markdown
    .split('\n')
    .map((l) => (l ? `> ${l}` : '>'))
    .join('\n');
}

export function headingMarkdown(value: string, depth: number): string {
  const h: Heading = {
    type: 'heading',
    depth: Math.min(6, Math.max(1, depth)) as Heading['depth'],
    children: text(value),
  };
  return write(h, hasMath(value));
}

/** One item of a list: numbered from `ordinal` where the page numbered it, else a bullet. */
export function listItemMarkdown(value: string, ordinal?: number): string {
  const list: List = {
    type: 'list',
    ordered: ordinal !== undefined,
    start: ordinal,
    spread: false,
    children: [{ type: 'listItem', spread: false, children: [{ type: 'paragraph', children: text(value) }] }],
  };
  return write(list, hasMath(value));
}

/** A GFM table, the first row as its header. */
export function tableMarkdown(cells: readonly (readonly string[])[]): string {
  if (!cells.length) return '';
  const cols = Math.max(...cells.map((r) => r.length));
  const table: Table = {
    type: 'table',
    children: cells.map((r) => ({
      type: 'tableRow',
      children: Array.from({ length: cols }, (_, i) => ({
        type: 'tableCell',
        children: text((r[i] ?? '').replace(/\s+/g, ' ').trim()),
      })),
    })),
  };
  return write(
    table,
    cells.some((r) => r.some(hasMath)),
  );
}
