/**
 * A table's cells once read: a column that holds nothing but currency signs (a statement's "$" set apart from its
 * figures) is folded into the figures' column, and the table is written as a GFM table when it is a plain grid
 * under one header row, else as an HTML table (colspan, rowspan, a thead of header rows), which markdown carries as
 * it is and olmOCR-Bench and OmniDocBench read.
 */
import { type Box, unionBox } from './layout/ink.js';
import type { TableSpan } from './layout/table-grid.js';
import { tableMarkdown, withDollarMath } from './markdown.js';

export interface TableText {
  /** Cell text by grid position, row by row; '' where a span covers the position. */
  cells: string[][];
  spans: TableSpan[];
  headerRows: number;
  /** Each cell's ink on the page (its lines' boxes together), by grid position; null where it has none. */
  boxes?: (Box | null)[][];
}

/** Boxes together; null where there are none. */
export const boxesTogether = (boxes: readonly (Box | null)[]): Box | null => {
  const own = boxes.filter((b): b is Box => b !== null);
  return own.length ? unionBox(own) : null;
};

const CURRENCY = /^[$€£¥₹]$/;

const spanAt = (t: TableText, r: number, c: number): TableSpan | undefined =>
  t.spans.find((s) => s.row === r && s.col === c);
const covers = (s: TableSpan, r: number, c: number): boolean =>
  r >= s.row && r < s.row + s.rowSpan && c >= s.col && c < s.col + s.colSpan;

/** Columns of currency signs folded into the column to their right ("$" + "2,416" -> "$2,416"). */
export function foldCurrencyColumns(t: TableText): TableText {
  let cur = t;
  for (let c = (cur.cells[0]?.length ?? 0) - 2; c >= 0; c--) {
    const body = cur.cells.slice(cur.headerRows);
    const signs = body.map((row) => row[c]).filter((x) => x !== '');
    const spanned = cur.spans.some((s) => s.row >= cur.headerRows && covers(s, s.row, c) && s.colSpan > 1);
    if (!signs.length || !signs.every((x) => CURRENCY.test(x.trim())) || spanned) continue;
    const cells = cur.cells.map((row, r) => {
      const out = [...row];
      const own = out[c].trim();
      // A header cell starting here and spanning on: its text moves with its span's start.
      if (own && !spanAt(cur, r, c))
        out[c + 1] = CURRENCY.test(own) ? `${own}${out[c + 1]}` : `${own} ${out[c + 1]}`.trim();
      else if (own) out[c + 1] = own;
      out.splice(c, 1);
      return out;
    });
    const spans = cur.spans
      .map((s): TableSpan => {
        // A span over the folded column loses it; one to its right moves left.
        if (s.col <= c && c < s.col + s.colSpan) return { ...s, colSpan: s.colSpan - 1 };
        if (s.col > c) return { ...s, col: s.col - 1 };
        return s;
      })
      .filter((s) => s.colSpan > 1 || s.rowSpan > 1);
    const boxes = cur.boxes?.map((row) => {
      const out = [...row];
      out[c + 1] = boxesTogether([out[c], out[c + 1]]);
      out.splice(c, 1);
      return out;
    });
    cur = { cells, spans, headerRows: cur.headerRows, ...(boxes ? { boxes } : {}) };
  }
  return cur;
}

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Markdown for a read table: GFM for a plain grid under one header row, HTML where cells span or headers stack. */
export function tableToMarkdown(t: TableText): string {
  return !t.spans.length && t.headerRows <= 1 ? tableMarkdown(t.cells) : tableHtml(t);
}

/** A read table as HTML: colspan, rowspan, a thead of header rows. */
export function tableHtml(t: TableText): string {
  const row = (cells: string[], r: number, tag: 'th' | 'td'): string => {
    const out: string[] = [];
    cells.forEach((text, c) => {
      if (t.spans.some((s) => covers(s, r, c) && !(s.row === r && s.col === c))) return;
      const s = spanAt(t, r, c);
      const colspan = s && s.colSpan > 1 ? ` colspan="${s.colSpan}"` : '';
      const attrs = `${colspan}${s && s.rowSpan > 1 ? ` rowspan="${s.rowSpan}"` : ''}`;
      out.push(`<${tag}${attrs}>${escapeHtml(withDollarMath(text).replace(/\s+/g, ' ').trim())}</${tag}>`);
    });
    return `<tr>${out.join('')}</tr>`;
  };
  const head = t.cells.slice(0, t.headerRows).map((cells, r) => row(cells, r, 'th'));
  const body = t.cells.slice(t.headerRows).map((cells, i) => row(cells, t.headerRows + i, 'td'));
  return [
    '<table>',
    ...(head.length ? ['<thead>', ...head, '</thead>'] : []),
    '<tbody>',
    ...body,
    '</tbody>',
    '</table>',
  ].join('\n');
}
