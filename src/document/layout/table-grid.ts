/**
 * A table region's grid. Rows are its line bands; each row is split into cells at gaps wider than a word space;
 * columns are where the rows that fill the most cells (the body) leave gaps, so a heading over several columns
 * spans them instead of breaking them. A stub label on several lines (tighter than the rows are set; the row's
 * figures level with its first line or its middle one) is one cell, not rows of its own; the rows above the body
 * whose stub cell is empty are its header.
 */
import type { GrayPage } from '../decode-image.js';
import { inkHeight, joinRanges, type Segment } from './cell-ranges.js';
import { type Box, type InkMap, unionBox } from './ink.js';
import { formulaPart, median, padLine } from './lines.js';

export interface LayoutLine {
  /** The crop box the model reads (the band plus padding). */
  box: Box;
  /** The ink band itself. */
  band: Box;
}

export interface TableSpan {
  row: number;
  col: number;
  rowSpan: number;
  colSpan: number;
}

export interface LayoutTable {
  rows: number;
  cols: number;
  /** cells[r][c]: the lines of the cell whose top-left is (r, c), top to bottom; empty where a span covers it. */
  cells: LayoutLine[][][];
  /** Cells covering more than one grid position (the rest are one by one). */
  spans: TableSpan[];
  /** Leading rows that head the columns. */
  headerRows: number;
}

/** A gap between cells is at least this many line heights wide (a word space is about a third of one). */
const CELL_GAP = 0.9;

/** A row band's cells: its ink split at gaps of at least `gap` columns. */
function segments(ink: InkMap, band: Box, gap: number): Segment[] {
  const out: Segment[] = [];
  let start = -1;
  let last = -1;
  for (let x = band.x; x <= band.x + band.width; x++) {
    let on = false;
    if (x < band.x + band.width) {
      for (let y = band.y; y < band.y + band.height && !on; y++) on = ink.data[y * ink.width + x] === 1;
    }
    if (on) {
      if (start < 0) start = x;
      else if (x - last - 1 >= gap) {
        out.push({
          x0: start,
          x1: last + 1,
          band: { x: start, y: band.y, width: last + 1 - start, height: band.height },
        });
        start = x;
      }
      last = x;
    }
  }
  if (start >= 0)
    out.push({ x0: start, x1: last + 1, band: { x: start, y: band.y, width: last + 1 - start, height: band.height } });
  return out;
}

/** Column edges [x0, x1) from the body rows' cells: x-ranges their cells cover, merged where they overlap. */
function columnsOf(body: Segment[][]): [number, number][] {
  const spans = body
    .flat()
    .map((s): [number, number] => [s.x0, s.x1])
    .sort((a, b) => a[0] - b[0]);
  const cols: [number, number][] = [];
  for (const [a, b] of spans) {
    const last = cols[cols.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else cols.push([a, b]);
  }
  return cols;
}

/**
 * The grid of a table region whose line bands are `bands` (top to bottom). `rules`: the horizontal rules taken out
 * of the page; one drawn under a heading (a booktabs cmidrule, a financial statement's "Year Ended") shows the
 * columns it heads. `parts`: the columns the cut found the table by (full-height gutters), where it did.
 */
export function tableGrid(
  ink: InkMap,
  bandsIn: readonly Box[],
  lh: number,
  page: GrayPage,
  region: Box,
  rules: readonly Box[] = [],
  parts: readonly Box[] = [],
): LayoutTable {
  let bands = bandsIn;
  const gap = Math.max(4, Math.round(CELL_GAP * lh));
  // Specks and dots are not cells (nor are the scraps of a drawing a table was mistaken for): a cell's ink is at
  // least 40% of a line tall, or half a line wide; and a stroke thinner than any lone character ("1" is a quarter
  // of a line wide) is what is left of a short cell border, not a cell.
  const cellLike = (s: Segment): boolean =>
    (s.x1 - s.x0 >= 0.5 * lh || inkHeight(ink, s) >= 0.4 * lh) && s.x1 - s.x0 >= Math.max(3, 0.12 * lh);
  const kept = bands.map((b) => joinRanges(ink, page, segments(ink, b, gap), lh, cellLike).filter(cellLike));
  bands = bands.filter((_, i) => kept[i].length);
  let rows = kept.filter((r) => r.length);
  if (!rows.length) return { rows: 0, cols: 0, cells: [], spans: [], headerRows: 0 };
  // The body: rows with (nearly) the most cells; their gaps are the columns' gutters.
  const most = Math.max(...rows.map((r) => r.length));
  const body = rows.filter((r) => r.length >= Math.max(2, most - 1));
  // One row of many cells is no body (a line cut in half at an image's edge leaves a row of letter tops): then the
  // gutters the cut found run full height, if it found any.
  const cols =
    body.length < 2 && parts.length > 1
      ? parts.map((p): [number, number] => [p.x, p.x + p.width])
      : columnsOf(body.length ? body : rows);
  const colOf = (s: Segment): [number, number] => columnsOfCell(cols, s);
  // How far apart the rows are set (the median gap between bands).
  const pitch = median(
    bands
      .slice(1)
      .map((b, i) => b.y - (bands[i].y + bands[i].height))
      .filter((g) => g > 0),
  );
  rows = ruledRows(stubLabels(rows, bands, pitch, colOf), rules, region, lh).map((m) => m.segs);
  const { cells, spans } = placeCells(rows, cols, colOf, { rules, lh, page, region });
  foldFormulaRows(cells, spans, lh, page, region);
  let headerRows = 1;
  while (headerRows < rows.length - 1 && !cells[headerRows][0].length && cells[headerRows].some((c) => c.length))
    headerRows++;
  // Where the first row heads the stub column too ("Source"), a row under it with an empty stub is a band within
  // the body, not more header.
  return {
    rows: cells.length,
    cols: cols.length,
    cells,
    spans,
    headerRows: cells[0][0].length && headerRows > 1 ? 1 : headerRows,
  };
}

/** The columns a cell overlaps: a heading set over several spans them all. */
function columnsOfCell(cols: readonly [number, number][], s: Segment): [number, number] {
  let first = -1;
  let last = -1;
  cols.forEach(([a, b], c) => {
    if (s.x0 < b && a < s.x1) {
      if (first < 0) first = c;
      last = c;
    }
  });
  if (first < 0) {
    // In a gutter (a short heading centred between columns): the column it is nearest.
    const mid = (s.x0 + s.x1) / 2;
    let best = 0;
    cols.forEach(([a, b], c) => {
      if (Math.abs((a + b) / 2 - mid) < Math.abs((cols[best][0] + cols[best][1]) / 2 - mid)) best = c;
    });
    first = last = best;
  }
  return [first, last];
}

/** Where a table's cells are placed: its rules, line height, page and region. */
interface CellPlacing {
  rules: readonly Box[];
  lh: number;
  page: GrayPage;
  region: Box;
}

/**
 * The columns a rule just under this cell covers (at least half of each), if it is the only cell of its row over it.
 */
function underRule(
  s: Segment,
  row: readonly Segment[],
  cols: readonly [number, number][],
  rules: readonly Box[],
  lh: number,
): [number, number] | null {
  const bottom = s.band.y + s.band.height;
  const rule = rules.find(
    (r) => r.y >= bottom - 2 && r.y <= bottom + 0.8 * lh && r.x <= s.x0 + 0.5 * lh && r.x + r.width >= s.x1 - 0.5 * lh,
  );
  if (!rule || row.some((o) => o !== s && o.x0 < rule.x + rule.width && rule.x < o.x1)) return null;
  const covered = cols
    .map(([a, b], c) => [c, Math.min(b, rule.x + rule.width) - Math.max(a, rule.x) >= 0.5 * (b - a)] as const)
    .filter(([, on]) => on);
  return covered.length ? [covered[0][0], covered[covered.length - 1][0]] : null;
}

/**
 * A label on several lines beside a row's figures (set level with its middle line, or its first): its other lines
 * hold cells in the first column only, closer to it than the rows are set apart. Rows with such lines folded in.
 */
function stubLabels(
  rows: Segment[][],
  bands: readonly Box[],
  pitch: number,
  colOf: (s: Segment) => [number, number],
): { segs: Segment[]; bands: Box[] }[] {
  const merged: { segs: Segment[]; bands: Box[] }[] = [];
  const gapAbove = (i: number): number => (i ? bands[i].y - (bands[i - 1].y + bands[i - 1].height) : Infinity);
  const stubOnly = (i: number): boolean => rows[i].every((s) => colOf(s)[1] === 0);
  let carried: { segs: Segment[]; bands: Box[] } | null = null;
  rows.forEach((segs, i) => {
    const prev = merged[merged.length - 1];
    const tightAbove = gapAbove(i) < 0.6 * pitch;
    if (carried && tightAbove) {
      // The lines of a label carried down to the row beside them.
      carried.segs.push(...segs);
      carried.bands.push(bands[i]);
      if (stubOnly(i)) return;
      merged.push(carried);
      carried = null;
      return;
    }
    if (carried) {
      merged.push(carried);
      carried = null;
    }
    if (prev && stubOnly(i) && prev.segs.some((s) => colOf(s)[0] === 0) && tightAbove) {
      prev.segs.push(...segs);
      prev.bands.push(bands[i]);
      return;
    }
    if (stubOnly(i) && i + 1 < rows.length && gapAbove(i + 1) < 0.6 * pitch) {
      carried = { segs: [...segs], bands: [bands[i]] };
      return;
    }
    merged.push({ segs: [...segs], bands: [bands[i]] });
  });
  if (carried) merged.push(carried);
  return merged;
}

/** Each row's cells into the grid's columns (a cell over several, or headed by a rule over several, spans them). */
function placeCells(
  rows: Segment[][],
  cols: readonly [number, number][],
  colOf: (s: Segment) => [number, number],
  { rules, lh, page, region }: CellPlacing,
): { cells: LayoutLine[][][]; spans: TableSpan[] } {
  const cells: LayoutLine[][][] = rows.map(() => cols.map(() => []));
  const spans: TableSpan[] = [];
  rows.forEach((segs, r) => {
    const taken = new Map<number, number>();
    for (const s of segs) {
      const own = colOf(s);
      const ruled = underRule(s, segs, cols, rules, lh);
      const [c0, c1] = ruled && ruled[0] <= own[0] && ruled[1] >= own[1] ? ruled : own;
      // Pieces of one cell on one line (a gap inside the cell as wide as a gutter): one line, read once.
      const same = cells[r][c0].find((l) => l.band.y === s.band.y && l.band.height === s.band.height);
      if (same) {
        same.band = unionBox([same.band, s.band]);
        same.box = padLine(same.band, page, region);
      } else cells[r][c0].push({ band: s.band, box: padLine(s.band, page, region) });
      taken.set(c0, Math.max(taken.get(c0) ?? c0, c1));
    }
    for (const [c0, c1] of taken) if (c1 > c0) spans.push({ row: r, col: c0, rowSpan: 1, colSpan: c1 - c0 + 1 });
  });
  for (const row of cells) for (const cell of row) cell.sort((a, b) => a.band.y - b.band.y || a.band.x - b.band.x);
  return { cells, spans };
}

/** A table is ruled row by row when at least this many rules run across it between its lines. */
const RULED_ROWS = 2;

/**
 * Rows of a table ruled row by row: the lines between two rules are one row, however many lines its cells hold (a
 * cell of two lines is one cell, not two rows with a hole in each).
 */
function ruledRows<T extends { segs: Segment[]; bands: Box[] }>(
  rows: T[],
  rules: readonly Box[],
  region: Box,
  lh: number,
): T[] {
  if (rows.length < 2) return rows;
  const top = rows[0].bands[0].y;
  const last = rows[rows.length - 1].bands;
  const bottom = last[last.length - 1].y + last[last.length - 1].height;
  const across = rules
    .filter(
      (r) =>
        r.x <= region.x + 0.1 * region.width &&
        r.x + r.width >= region.x + 0.9 * region.width &&
        r.y > top &&
        r.y < bottom,
    )
    .map((r) => r.y);
  // Ruled row by row, not only under its header or round a band: a rule for about every row that starts a label.
  const left = Math.min(...rows.flatMap((r) => r.segs.map((s) => s.x0)));
  const labelled = rows.filter((r) => r.segs.some((s) => s.x0 <= left + lh)).length;
  if (across.length < RULED_ROWS || across.length + 1 < 0.6 * labelled) return rows;
  const slot = (row: T): number => across.filter((y) => y <= row.bands[0].y).length;
  const out: T[] = [];
  for (const row of rows) {
    const prev = out[out.length - 1];
    if (prev && slot(prev) === slot(row)) {
      prev.segs.push(...row.segs);
      prev.bands.push(...row.bands);
    } else out.push({ ...row, segs: [...row.segs], bands: [...row.bands] });
  }
  return out;
}

/**
 * A formula whose limit or fraction part the rows cut off (the rows are bands across the whole table, and text
 * beside the formula sets them): the part, alone at the top or bottom of its cell in the next row, joins the line
 * of the same column it belongs to; a row left with nothing is dropped.
 */
function foldFormulaRows(cells: LayoutLine[][][], spans: TableSpan[], lh: number, page: GrayPage, region: Box): void {
  const join = (into: LayoutLine, part: LayoutLine): void => {
    into.band = unionBox([into.band, part.band]);
    into.box = padLine(into.band, page, region);
  };
  for (let r = 0; r + 1 < cells.length; r++) {
    cells[r].forEach((upper, c) => {
      const lower = cells[r + 1][c];
      const last = upper[upper.length - 1];
      const first = lower[0];
      if (!last || !first || spans.some((s) => (s.row === r || s.row === r + 1) && s.col === c)) return;
      if (formulaPart(first.band, last.band, lh)) {
        join(last, first);
        lower.shift();
      } else if (formulaPart(last.band, first.band, lh)) {
        join(first, last);
        upper.pop();
      }
    });
  }
  for (let r = cells.length - 1; r >= 0; r--) {
    if (cells[r].some((cell) => cell.length) || spans.some((s) => s.row === r)) continue;
    cells.splice(r, 1);
    for (const s of spans) if (s.row > r) s.row--;
  }
}
