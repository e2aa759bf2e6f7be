/**
 * Tables in markdown as olmOCR-Bench reads them for its table facts (olmocr/bench/table_parsing.py, restated):
 * GFM tables (runs of lines with a pipe; the first row and the first column are headings) and HTML tables (parsed
 * with parse5; th cells and thead rows are headings; colspan and rowspan fill the grid). Each cell knows its
 * neighbours up, down, left and right over the grid, and its headings: walking up (or left) from a cell, the
 * heading cells met, else the cells where the walk ends.
 */
import { type DefaultTreeAdapterMap, parseFragment } from 'parse5';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

export type CellId = `${number},${number}`;

export interface TableData {
  text: Map<CellId, string>;
  headings: Set<CellId>;
  up: Map<CellId, Set<CellId>>;
  down: Map<CellId, Set<CellId>>;
  left: Map<CellId, Set<CellId>>;
  right: Map<CellId, Set<CellId>>;
}

interface CellSpec {
  text: string;
  rowSpan: number;
  colSpan: number;
  heading: boolean;
}

const id = (r: number, c: number): CellId => `${r},${c}`;

/** The grid a table's rows make once spans are laid out, and each cell's neighbours on it. */
export function buildTable(rows: readonly (readonly CellSpec[])[]): TableData | null {
  const text = new Map<CellId, string>();
  const headings = new Set<CellId>();
  const meta = new Map<CellId, { r: number; c: number; rs: number; cs: number }>();
  const grid: (CellId | null)[][] = [];
  let carry: ([CellId, number] | null)[] = [];
  rows.forEach((cells, r) => {
    const line: (CellId | null)[] = [];
    let c = 0;
    let k = 0;
    while (k < cells.length || c < carry.length) {
      const held = carry[c];
      if (c < carry.length && held) {
        line.push(held[0]);
        carry[c] = held[1] > 1 ? [held[0], held[1] - 1] : null;
        c++;
        continue;
      }
      if (k >= cells.length) {
        line.push(null);
        c++;
        continue;
      }
      const s = cells[k++];
      const cell = id(r, c);
      text.set(cell, s.text);
      if (s.heading) headings.add(cell);
      meta.set(cell, { r, c, rs: s.rowSpan, cs: s.colSpan });
      while (carry.length < c + s.colSpan) carry.push(null);
      for (let o = 0; o < s.colSpan; o++) {
        line.push(cell);
        carry[c + o] = s.rowSpan > 1 ? [cell, s.rowSpan - 1] : null;
      }
      c += s.colSpan;
    }
    grid.push(line);
  });
  while (carry.some(Boolean)) {
    grid.push(carry.map((h) => (h ? h[0] : null)));
    carry = carry.map((h) => (h && h[1] > 1 ? [h[0], h[1] - 1] : null));
  }
  if (!text.size) return null;
  const width = Math.max(...grid.flatMap((line) => line.map((v, i) => (v ? i + 1 : 0))));
  for (const line of grid) line.length = width;
  const rel = (): Map<CellId, Set<CellId>> => new Map([...text.keys()].map((k) => [k, new Set<CellId>()]));
  const up = rel();
  const down = rel();
  const left = rel();
  const right = rel();
  const at = (r: number, c: number): CellId | null => grid[r]?.[c] ?? null;
  for (const [cell, { r, c, rs, cs }] of meta) {
    const walk = (set: Set<CellId>, rr: number[], cc: (rowOrCol: number) => Iterable<[number, number]>): void => {
      for (const x of rr) {
        for (const [gr, gc] of cc(x)) {
          const n = at(gr, gc);
          if (n === null || n === cell) continue;
          set.add(n);
          break;
        }
      }
    };
    const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);
    walk(right.get(cell) as Set<CellId>, range(r, r + rs), function* (row) {
      for (let x = c + cs; x < width; x++) yield [row, x];
    });
    walk(left.get(cell) as Set<CellId>, range(r, r + rs), function* (row) {
      for (let x = c - 1; x >= 0; x--) yield [row, x];
    });
    walk(down.get(cell) as Set<CellId>, range(c, c + cs), function* (col) {
      for (let y = r + rs; y < grid.length; y++) yield [y, col];
    });
    walk(up.get(cell) as Set<CellId>, range(c, c + cs), function* (col) {
      for (let y = r - 1; y >= 0; y--) yield [y, col];
    });
  }
  return { text, headings, up, down, left, right };
}

/** From `start`, along `relation` as far as it goes: the heading cells met, else the cells where it ended. */
export function headingsFrom(t: TableData, start: CellId, relation: Map<CellId, Set<CellId>>): Set<CellId> {
  const found = new Set<CellId>();
  const ends = new Set<CellId>();
  const seen = new Set<CellId>();
  const todo = [start];
  while (todo.length) {
    const cur = todo.pop() as CellId;
    if (seen.has(cur)) continue;
    seen.add(cur);
    if (t.headings.has(cur)) found.add(cur);
    const next = relation.get(cur);
    if (!next || !next.size) ends.add(cur);
    else todo.push(...next);
  }
  found.delete(start);
  ends.delete(start);
  return found.size ? found : ends;
}

/** GFM tables: runs of two or more lines holding a pipe, the dashes row left out; row 0 and column 0 are headings. */
export function markdownTables(md: string): TableData[] {
  const out: TableData[] = [];
  const flush = (lines: string[]): void => {
    if (lines.length < 2) return;
    const sep = lines.findIndex((l) => {
      const body = l.replace(/\|/g, '').trim();
      return body !== '' && /^[-\s:]+$/.test(body);
    });
    const rows = lines
      .filter((l, i) => i !== sep && !(l.trim() && /^[-\s:|]+$/.test(l)))
      .map((l) => {
        const cells = l.split('|').map((c) => c.trim());
        if (cells[0] === '') cells.shift();
        if (cells.length && cells[cells.length - 1] === '') cells.pop();
        return cells;
      })
      .filter((cells) => cells.length);
    const t = buildTable(
      rows.map((cells, r) => cells.map((text, c) => ({ text, rowSpan: 1, colSpan: 1, heading: r === 0 || c === 0 }))),
    );
    if (t) out.push(t);
  };
  let run: string[] = [];
  for (const line of md.trim().split('\n')) {
    if (line.includes('|')) run.push(line);
    else {
      flush(run);
      run = [];
    }
  }
  flush(run);
  return out;
}

function elements(node: Node, tag: string, out: Element[] = []): Element[] {
  for (const child of 'childNodes' in node ? node.childNodes : []) {
    if ('tagName' in child) {
      if (child.tagName === tag) out.push(child);
      elements(child, tag, out);
    }
  }
  return out;
}

function textOf(node: Node): string {
  if (node.nodeName === '#text' && 'value' in node) return node.value;
  if ('tagName' in node && node.tagName === 'br') return '\n';
  return 'childNodes' in node ? node.childNodes.map(textOf).join('') : '';
}

const spanOf = (el: Element, name: string): number => {
  const v = Number.parseInt(el.attrs.find((a) => a.name === name)?.value ?? '', 10);
  return Number.isFinite(v) && v > 0 ? v : 1;
};

/** HTML tables: th cells and thead rows are headings; colspan and rowspan as given. */
export function htmlTables(md: string): TableData[] {
  const out: TableData[] = [];
  for (const table of elements(parseFragment(md), 'table')) {
    const rows = elements(table, 'tr').map((tr) => {
      const inHead = ((n: Node | null): boolean => {
        for (let p = n; p; p = 'parentNode' in p ? (p.parentNode as Node | null) : null)
          if ('tagName' in p && p.tagName === 'thead') return true;
        return false;
      })(tr);
      return tr.childNodes
        .filter((c): c is Element => 'tagName' in c && (c.tagName === 'td' || c.tagName === 'th'))
        .map((c) => ({
          text: textOf(c).trim(),
          rowSpan: spanOf(c, 'rowspan'),
          colSpan: spanOf(c, 'colspan'),
          heading: c.tagName === 'th' || inHead,
        }));
    });
    const t = buildTable(rows);
    if (t) out.push(t);
  }
  return out;
}
