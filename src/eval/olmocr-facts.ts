/**
 * olmOCR-Bench's pass/fail facts, scored by its rules as its README states them: text is NFC-normalised,
 * quote and dash variants folded, whitespace collapsed and markdown emphasis ignored; "present" and "absent"
 * allow `max_diffs` edits (fuzzy substring), "order" needs both found with `before` first, "baseline" (a blank
 * page) passes when the output has at most `max_length` alphanumeric characters. Table and math facts are
 * counted and scored as a reader of our markdown would (table: the cell and its neighbour in one table row or
 * column; math: the LaTeX present as text), which our output rarely satisfies: they are reported, not hidden.
 */

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

function tableRows(md: string): string[][][] {
  const tables: string[][][] = [];
  let cur: string[][] = [];
  for (const line of md.split('\n')) {
    if (/^\s*\|.*\|\s*$/.test(line)) {
      if (/^\s*\|\s*:?-{3,}/.test(line)) continue;
      cur.push(line.trim().slice(1, -1).split(/(?<!\\)\|/).map((c) => normaliseFact(c)));
    } else if (cur.length) {
      tables.push(cur);
      cur = [];
    }
  }
  if (cur.length) tables.push(cur);
  return tables;
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
      return found(f.math ?? '').ok;
    case 'table': {
      const cell = normaliseFact(f.cell ?? '');
      for (const rows of tableRows(markdown)) {
        for (let r = 0; r < rows.length; r++) {
          for (let c = 0; c < rows[r].length; c++) {
            if (rows[r][c] !== cell) continue;
            const ok =
              (f.left === undefined || rows[r][c - 1] === normaliseFact(f.left)) &&
              (f.right === undefined || rows[r][c + 1] === normaliseFact(f.right)) &&
              (f.up === undefined || rows[r - 1]?.[c] === normaliseFact(f.up)) &&
              (f.down === undefined || rows[r + 1]?.[c] === normaliseFact(f.down)) &&
              (f.top_heading === undefined || rows[0][c] === normaliseFact(f.top_heading)) &&
              (f.left_heading === undefined || rows[r][0] === normaliseFact(f.left_heading));
            if (ok) return true;
          }
        }
      }
      return false;
    }
  }
}
