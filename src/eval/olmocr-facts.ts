/**
 * olmOCR-Bench's pass/fail facts, scored by its rules as its README states them: text is NFC-normalised,
 * quote and dash variants folded, whitespace collapsed and markdown emphasis ignored; "present" and "absent"
 * allow `max_diffs` edits (fuzzy substring), "order" needs both found with `before` first, "baseline" (a blank
 * page) passes when the output has at most `max_length` alphanumeric characters. Table facts as olmOCR-Bench reads
 * tables (olmocr-tables.ts: GFM and HTML tables, spans, heading cells; a cell matches at rapidfuzz's ratio >=
 * max(0.5, 1 - max_diffs / its length)). Math facts as olmOCR-Bench's MathTest scores them: the markdown's
 * equations rendered by KaTeX and compared as MathML (olmocr-math.ts).
 */

import { mathFactHolds } from './olmocr-math.js';
import { type CellId, headingsFrom, htmlTables, markdownTables } from './olmocr-tables.js';

export interface Fact {
  pdf: string;
  page: number;
  id: string;
  type: 'present' | 'absent' | 'order' | 'table' | 'math' | 'baseline';
  text?: string;
  before?: string;
  after?: string;
  cell?: string;
  left?: string;
  right?: string;
  up?: string;
  down?: string;
  top_heading?: string;
  left_heading?: string;
  math?: string;
  max_diffs?: number;
  case_sensitive?: boolean;
  max_length?: number;
}

export function normaliseFact(s: string): string {
  return s
    .normalize('NFC')
    .replace(/[‘’‛′`]/g, "'")
    .replace(/[“”„‟″]/g, '"')
    .replace(/[‐‑‒–—―−]/g, '-')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1') // markdown's backslash escapes: the character itself, then stripped as before
    .replace(/(\*\*|__|\*|_)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Smallest edit distance of `pattern` to any substring of `text` (Sellers), and where that match ends. */
export function fuzzyFind(text: string, pattern: string): { distance: number; end: number } {
  const m = pattern.length;
  if (!m) return { distance: 0, end: 0 };
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  let best = prev[m];
  let end = 0;
  for (let j = 1; j <= text.length; j++) {
    cur[0] = 0;
    const c = text.charCodeAt(j - 1);
    for (let i = 1; i <= m; i++) {
      cur[i] = Math.min(prev[i] + 1, cur[i - 1] + 1, prev[i - 1] + (pattern.charCodeAt(i - 1) === c ? 0 : 1));
    }
    if (cur[m] < best) {
      best = cur[m];
      end = j;
    }
    [prev, cur] = [cur, prev];
  }
  return { distance: best, end };
}

/** rapidfuzz's ratio: 1 - the insertions and deletions between a and b over their summed length. */
export function ratio(a: string, b: string): number {
  if (!a.length && !b.length) return 1;
  let prev = new Int32Array(b.length + 1);
  let cur = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++)
      cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    [prev, cur] = [cur, prev];
  }
  return (2 * prev[b.length]) / (a.length + b.length);
}

function tableFact(f: Fact, markdown: string): boolean {
  const want = (s: string | undefined): string | undefined =>
    s === undefined || s === '' ? undefined : normaliseFact(s);
  const cell = normaliseFact(f.cell ?? '');
  const near = (target: string, got: string): boolean =>
    ratio(target, normaliseFact(got)) >= Math.max(0.5, 1 - (f.max_diffs ?? 0) / Math.max(1, target.length));
  for (const t of [...markdownTables(markdown), ...htmlTables(markdown)]) {
    for (const [at, text] of t.text) {
      if (!near(cell, text)) continue;
      const holds = (target: string | undefined, cells: Set<CellId> | undefined): boolean =>
        target === undefined || [...(cells ?? [])].some((c) => near(target, t.text.get(c) ?? ''));
      if (
        holds(want(f.up), t.up.get(at)) &&
        holds(want(f.down), t.down.get(at)) &&
        holds(want(f.left), t.left.get(at)) &&
        holds(want(f.right), t.right.get(at)) &&
        holds(want(f.top_heading), headingsFrom(t, at, t.up)) &&
        holds(want(f.left_heading), headingsFrom(t, at, t.left))
      )
        return true;
    }
  }
  return false;
}

export function checkFact(f: Fact, markdown: string): boolean {
  const cs = f.case_sensitive ?? true;
  const prep = (s: string): string => (cs ? normaliseFact(s) : normaliseFact(s).toLowerCase());
  const doc = prep(markdown);
  const found = (s: string): { ok: boolean; end: number } => {
    const p = prep(s);
    const r = fuzzyFind(doc, p);
    return { ok: r.distance <= (f.max_diffs ?? 0), end: r.end - p.length };
  };
  switch (f.type) {
    case 'present':
      return found(f.text ?? '').ok;
    case 'absent':
      return !found(f.text ?? '').ok;
    case 'order': {
      const a = found(f.before ?? '');
      const b = found(f.after ?? '');
      return a.ok && b.ok && a.end < b.end;
    }
    case 'baseline':
      return markdown.replace(/[^\p{L}\p{N}]/gu, '').length <= (f.max_length ?? 10);
    case 'math':
      return mathFactHolds(f.math ?? '', markdown);
    case 'table':
      return tableFact(f, markdown);
  }
}
