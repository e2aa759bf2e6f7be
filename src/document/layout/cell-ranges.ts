/**
 * Pieces of a table row's ink between word-wide gaps (segments, table-grid.ts cuts them), and ranges ("50 – 60")
 * that the cut splits at their dash, put back together.
 */
import type { GrayPage } from '../decode-image.js';
import { type Box, type InkMap, inkThreshold, unionBox } from './ink.js';

export interface Segment {
  x0: number;
  x1: number;
  band: Box;
}

/** The first and last rows of a segment's ink (its own extent, not its row band's); null where it has none. */
function inkRows(ink: InkMap, s: Segment): [number, number] | null {
  let top = -1;
  let bottom = -1;
  for (let y = s.band.y; y < s.band.y + s.band.height; y++) {
    const base = y * ink.width;
    for (let x = s.x0; x < s.x1; x++) {
      if (ink.data[base + x]) {
        if (top < 0) top = y;
        bottom = y;
        break;
      }
    }
  }
  return top < 0 ? null : [top, bottom];
}

/** Rows of ink a segment spans. */
export function inkHeight(ink: InkMap, s: Segment): number {
  const rows = inkRows(ink, s);
  return rows ? rows[1] - rows[0] + 1 : 0;
}

/** Gaps around a range's dash ("50 – 60") are at most this many line heights: a column's gutter is wider. */
const RANGE_GAP = 2;

/** Whether ink rows [top, bottom] are a dash's: a thin stroke at mid-height of its row band. */
function dashRows(top: number, bottom: number, band: Box, lh: number): boolean {
  const mid = (top + bottom) / 2;
  return (
    bottom - top + 1 <= Math.max(2, 0.25 * lh) && mid > band.y + 0.25 * band.height && mid < band.y + 0.8 * band.height
  );
}

/**
 * A faint dash in the gap between two cells: a small scan or render draws an en dash in grey, lighter than the ink
 * threshold, so the ink map shows only the gap. Pixels darker than a third of the way from the gap's paper to the
 * ink threshold, all in one thin stroke at mid-height at least a quarter of a line wide.
 */
function faintDash(page: GrayPage, a: Segment, b: Segment, lh: number): boolean {
  const band = unionBox([a.band, b.band]);
  const x0 = a.x1 + 1;
  const x1 = b.x0 - 1;
  if (x1 - x0 < Math.max(2, 0.25 * lh)) return false;
  let paper = 0;
  for (let y = band.y; y < band.y + band.height; y++)
    for (let x = x0; x < x1; x++) paper = Math.max(paper, page.data[y * page.width + x]);
  const faint = paper - (paper - inkThreshold(page)) / 3;
  let top = Infinity;
  let bottom = -1;
  let left = Infinity;
  let right = -1;
  for (let y = band.y; y < band.y + band.height; y++)
    for (let x = x0; x < x1; x++)
      if (page.data[y * page.width + x] < faint) {
        top = Math.min(top, y);
        bottom = Math.max(bottom, y);
        left = Math.min(left, x);
        right = Math.max(right, x);
      }
  // Paper on both sides of the stroke: a stroke touching a cell is part of its letters.
  const apart = left > x0 && right < x1 - 1;
  return bottom >= 0 && apart && right - left + 1 >= Math.max(2, 0.25 * lh) && dashRows(top, bottom, band, lh);
}

/**
 * A range ("50 – 60") is one cell, though the cut at word-wide gaps splits it at its dash: where the dash is ink it
 * is a cell of its own between the figures (which the speck filter would drop); where it is lighter than the ink
 * threshold, the figures are two cells with a grey stroke between. A dash standing for an empty cell has a gutter
 * on both sides and stays apart.
 */
export function joinRanges(
  ink: InkMap,
  page: GrayPage,
  segs: Segment[],
  lh: number,
  cellLike: (s: Segment) => boolean,
): Segment[] {
  const near = (a: Segment, b: Segment): boolean => b.x0 - a.x1 <= RANGE_GAP * lh;
  const inkDash = (s: Segment): boolean => {
    const rows = inkRows(ink, s);
    return !!rows && s.x1 - s.x0 <= 1.5 * lh && dashRows(rows[0], rows[1], s.band, lh);
  };
  const join = (a: Segment, b: Segment): Segment => ({ x0: a.x0, x1: b.x1, band: unionBox([a.band, b.band]) });
  const out: Segment[] = [];
  for (let i = 0; i < segs.length; i++) {
    const prev = out[out.length - 1];
    const s = segs[i];
    const next = segs[i + 1];
    // The figures are cells of their own (a letter's scraps in a faint small print are not).
    if (prev && next && near(prev, s) && near(s, next) && cellLike(prev) && cellLike(next) && inkDash(s)) {
      out[out.length - 1] = join(prev, next);
      i++;
    } else if (prev && near(prev, s) && cellLike(prev) && cellLike(s) && faintDash(page, prev, s, lh))
      out[out.length - 1] = join(prev, s);
    else out.push(s);
  }
  return out;
}
