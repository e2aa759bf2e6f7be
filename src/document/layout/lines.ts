/**
 * Text lines inside a region, top to bottom: a row-ink profile cut into bands, over-tall bands split at their
 * weakest row, specks and rules dropped, accents folded into their line, each band boxed tightly with padding.
 */
import type { GrayPage } from '../decode-image.js';
import { binarize, type Box, firstInk, type InkMap, inkCount, lastInk, unionBox, wordsOf } from './ink.js';

export type { Box } from './ink.js';

interface Band {
  top: number; // inclusive
  bottom: number; // exclusive
}

function splitTall(band: Band, rows: Int32Array, typical: number, keepFragments: boolean): Band[] {
  const h = band.bottom - band.top;
  if (h < 1.7 * typical) return [band];
  let mean = 0;
  for (let y = band.top; y < band.bottom; y++) mean += rows[y];
  mean /= h;
  // The weakest row near a line boundary: search away from the band's ends.
  const from = band.top + Math.floor(0.6 * typical);
  const to = band.bottom - Math.floor(0.6 * typical);
  let cut = -1;
  for (let y = from; y < to; y++) if (cut < 0 || rows[y] < rows[cut]) cut = y;
  if (cut < 0 || rows[cut] > 0.35 * mean) return [band];
  // A line has a body (rows denser than the band's mean); the strip above a line of large type, where only
  // capitals and ascenders reach, has none and is under half the rest's height: not a line of its own.
  const fragment = (a: number, b: number, rest: number): boolean => {
    if (b - a >= 0.5 * rest) return false;
    for (let y = a; y < b; y++) if (rows[y] >= mean) return false;
    return true;
  };
  if (
    keepFragments &&
    (fragment(band.top, cut, band.bottom - cut - 1) || fragment(cut + 1, band.bottom, cut - band.top))
  )
    return [band];
  return [
    ...splitTall({ top: band.top, bottom: cut }, rows, typical, keepFragments),
    ...splitTall({ top: cut + 1, bottom: band.bottom }, rows, typical, keepFragments),
  ];
}

/** The middle value (the upper one of an even count); 0 for none. */
export function median(xs: readonly number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Row ink counts of a region (index = page row). */
export function rowProfile(ink: InkMap, r: Box): Int32Array {
  const { data, width } = ink;
  const words = wordsOf(data);
  const rows = new Int32Array(ink.height);
  for (let y = r.y; y < r.y + r.height; y++)
    rows[y] = inkCount(data, words, y * width + r.x, y * width + r.x + r.width);
  return rows;
}

/**
 * Raw line bands of a region (no padding), for layout statistics and for boxing. `typical` is the page's line
 * height where known: a region whose lines all touch (tight leading) has no typical band of its own.
 */
export function lineBands(ink: InkMap, r: Box, typical?: number): Box[] {
  const rows = rowProfile(ink, r);
  // Rows with a couple of ink pixels are noise, not text.
  const minRow = Math.max(2, Math.round(r.width * 0.0015));
  let bands: Band[] = [];
  let start = -1;
  for (let y = r.y; y <= r.y + r.height; y++) {
    const on = y < r.y + r.height && rows[y] >= minRow;
    if (on && start < 0) start = y;
    if (!on && start >= 0) {
      bands.push({ top: start, bottom: y });
      start = -1;
    }
  }
  // Drop specks and solid bars: too thin to be a line of text, or nearly all ink.
  bands = bands.filter((b) => {
    const bh = b.bottom - b.top;
    if (bh < 4) return false;
    let n = 0;
    for (let y = b.top; y < b.bottom; y++) n += rows[y];
    return n / (bh * r.width) < 0.6;
  });
  if (!bands.length) return [];
  const heights = bands.map((b) => b.bottom - b.top).sort((a, b) => a - b);
  const own = heights[Math.floor(heights.length / 2)];
  const lh = typical ? Math.min(typical, own) : own;
  // Only with the page's line height known: the page-wide estimate of it (no `typical`) splits as it always has.
  bands = bands.flatMap((b) => splitTall(b, rows, lh, typical !== undefined));
  // Accents or dots cut off above a line: fold a small band into the band just below it.
  const merged: Band[] = [];
  for (let i = 0; i < bands.length; i++) {
    const b = bands[i];
    const next = bands[i + 1];
    if (next && b.bottom - b.top < 0.4 * lh && next.top - b.bottom < 0.3 * lh) {
      next.top = b.top;
      continue;
    }
    merged.push(b);
  }
  const out: Box[] = [];
  const words = wordsOf(ink.data);
  for (const b of merged) {
    let left = r.x + r.width;
    let right = -1;
    // Per row, only the columns that could still move an edge: in from the left up to the leftmost ink found so
    // far, in from the right down to the rightmost (the band's middle is read once, not once per row).
    for (let y = b.top; y < b.bottom; y++) {
      const base = y * ink.width;
      const l = firstInk(ink.data, words, base + r.x, base + left);
      if (l >= 0) left = l - base;
      const rr = lastInk(ink.data, words, base + Math.max(r.x, right + 1), base + r.x + r.width);
      if (rr >= 0) right = rr - base;
    }
    if (right >= left) out.push({ x: left, y: b.top, width: right - left + 1, height: b.bottom - b.top });
  }
  return out;
}

/**
 * Whether band `part`, just above or below band `line`, is a piece of a formula set on that line: a limit (a glyph
 * or two of small type under or over an integral or a sum, whose line the operator makes tall) or a fraction's
 * numerator or denominator (narrower than the line, touching it, and well inside it: a paragraph's short last
 * line starts where the line above starts, an indented one a little further in).
 */
export function formulaPart(part: Box, line: Box, lh: number): boolean {
  const gap = part.y >= line.y + line.height ? part.y - (line.y + line.height) : line.y - (part.y + part.height);
  if (gap < 0) return false;
  const within = part.x >= line.x - 0.3 * lh && part.x + part.width <= line.x + line.width + 0.3 * lh;
  if (!within) return false;
  // A limit hangs off a big operator, so its line is taller than type (a hanging line's "L24" under a reference is
  // not).
  const limit = line.height >= 1.4 * lh && part.height < 0.8 * lh && part.width < 2 * lh && gap < 0.5 * lh;
  // A fraction stands after something on its line ("= -"), further in than an indented line of text starts, and
  // its parts are a few symbols wide (a right-aligned line of text under another is wider).
  const fraction =
    gap <= 0.15 * lh &&
    part.width <= Math.min(0.7 * line.width, 6 * lh) &&
    part.x >= line.x + 2 * lh &&
    part.height <= 1.2 * lh;
  return limit || fraction;
}

/** A block's bands (top to bottom) with the pieces of a formula set above or below its line folded into it. */
export function foldFormulaParts(bands: readonly Box[], lh: number): Box[] {
  const out = [...bands];
  for (let changed = true; changed;) {
    changed = false;
    for (let i = 0; i + 1 < out.length; i++) {
      const [a, b] = [out[i], out[i + 1]];
      if (formulaPart(b, a, lh) || formulaPart(a, b, lh)) {
        out.splice(i, 2, unionBox([a, b]));
        changed = true;
        break;
      }
    }
  }
  return out;
}

/** A line's crop box: the band padded the way training crops were (about 15% above and below). */
export function padLine(b: Box, page: { width: number; height: number }, clip?: Box): Box {
  const padY = Math.round(0.15 * b.height);
  const padX = Math.round(0.25 * b.height);
  const cx0 = clip ? clip.x : 0;
  const cx1 = clip ? clip.x + clip.width : page.width;
  const x0 = Math.max(cx0, b.x - padX);
  const y0 = Math.max(0, b.y - padY);
  const x1 = Math.min(cx1, b.x + b.width + padX);
  const y1 = Math.min(page.height, b.y + b.height + padY);
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** Lines of a clean one-column page, as padded crop boxes, top to bottom. */
export function findLines(page: GrayPage): Box[] {
  const ink = binarize(page);
  return lineBands(ink, { x: 0, y: 0, width: page.width, height: page.height }).map((b) => padLine(b, page));
}
