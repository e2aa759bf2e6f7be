/**
 * Markdown for the text the model read, written by mdast-util-to-markdown from a syntax tree rather than pasted
 * together: the text is escaped wherever markdown would read it as syntax (`<Flav>` as raw HTML, `<8225@x>` as a
 * link, `*`, `_`, `#`, `|`, a leading `1.` or `---`), so that rendering the markdown shows exactly the text read.
 */
import type { Heading, List, Nodes, Paragraph, PhrasingContent, Table } from 'mdast';
import { gfmTableToMarkdown } from 'mdast-util-gfm-table';
import { toMarkdown } from 'mdast-util-to-markdown';

/** Between the pages of a multi-page document: a thematic break, which every CommonMark renderer keeps. */
export const PAGE_BREAK = '\n\n---\n\n';

const text = (value: string): PhrasingContent[] => (value ? [{ type: 'text', value }] : []);

function write(node: Nodes): string {
  return toMarkdown(node, {
    bullet: '-',
    listItemIndent: 'one',
    // Every `<` escaped, not only before a letter: `<8225@example.com>` is an e-mail autolink too.
    unsafe: [{ character: '<', inConstruct: 'phrasing' }],
    // (GFM renderers also link bare addresses such as a@b.co in text; no escape stops that, and the link's
    // text is the text read.)
    extensions: [gfmTableToMarkdown()],
  }).replace(/\n+$/, '');
}

export function paragraphMarkdown(value: string): string {
  const p: Paragraph = { type: 'paragraph', children: text(value) };
  return write(p);
}

export function headingMarkdown(value: string, depth: number): string {
  const h: Heading = { type: 'heading', depth: Math.min(6, Math.max(1, depth)) as Heading['depth'], children: text(value) };
  return write(h);
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
  return write(list);
}

/** A GFM table, the first row as its header. */
export function tableMarkdown(cells: readonly (readonly string[])[]): string {
  if (!cells.length) return '';
  const cols = Math.max(...cells.map((r) => r.length));
  const table: Table = {
    type: 'table',
    children: cells.map((r) => ({
      type: 'tableRow',
      children: Array.from({ length: cols }, (_, i) => ({ type: 'tableCell', children: text((r[i] ?? '').replace(/\s+/g, ' ').trim()) })),
    })),
  };
  return write(table);
}
