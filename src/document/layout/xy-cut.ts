/**
 * The recursive XY-cut of a page's ink: column gutters first (a split whose parts share their rows is a table),
 * then paragraph gaps, down to the leaves that become blocks (analyze.ts).
 */
import { type Box, columnInk, firstInk, type InkMap, lastInk, wordsOf } from './ink.js';
import { lineBands, median, rowProfile } from './lines.js';

export type Leaf = { kind: 'block'; box: Box } | { kind: 'table'; box: Box; parts: Box[] };

function trim(ink: InkMap, r: Box): Box | null {
  const { data, width } = ink;
  const words = wordsOf(data);
  let x0 = r.x + r.width;
  let x1 = -1;
  let y0 = r.y + r.height;
  let y1 = -1;
  for (let y = r.y; y < r.y + r.height; y++) {
    const base = y * width;
    // Per row, only the columns that could still move an edge: in from the left up to the leftmost ink found so
    // far, in from the right down to the rightmost.
    let inked = false;
    const left = firstInk(data, words, base + r.x, base + x0);
    if (left >= 0) {
      x0 = left - base;
      inked = true;
    }
    const right = lastInk(data, words, base + Math.max(r.x, x1 + 1), base + r.x + r.width);
    if (right >= 0) {
      x1 = right - base;
      inked = true;
    }
    // The row's ink, if any, lies within [x0, x1]: a row counts for the vertical extent if it has any.
    if (!inked && x1 >= x0) inked = firstInk(data, words, base + x0, base + x1 + 1) >= 0;
    if (inked) {
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** Runs of empty positions in a profile (inside it, not at its ends) at least `min` long: [start, end). */
function gaps(profile: Int32Array, min: number): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  for (let i = 0; i <= profile.length; i++) {
    const empty = i < profile.length && profile[i] === 0;
    if (empty && start < 0) start = i;
    if (!empty && start >= 0) {
      if (start > 0 && i < profile.length && i - start >= min) out.push([start, i]);
      start = -1;
    }
  }
  return out;
}

/**
 * Running text fills a wide column: most of its lines reach across most of a column at least a dozen line
 * heights wide (table columns of numbers also fill their width, but are narrow).
 */
function isTextColumn(bands: Box[], part: Box, lh: number): boolean {
  if (bands.length < 4 || part.width < 12 * lh) return false;
  const full = bands.filter((b) => b.width >= 0.75 * part.width).length;
  return full >= 0.6 * bands.length;
}

/** Do these side-by-side parts share their rows, as table columns do (and text columns, mostly, do not)? */
function looksLikeTable(ink: InkMap, parts: Box[], page: { width: number }, lh: number): boolean {
  const bands = parts.map((p) => lineBands(ink, p, lh));
  // A column of running text beside anything (another column, a sidebar) is a page layout, not a table.
  if (bands.some((b, i) => isTextColumn(b, parts[i], lh))) return false;
  const narrow = parts.every((p) => p.width < 0.38 * page.width);
  if (parts.length < 3 && !narrow) return false; // two wide parts: text columns
  const centers = bands
    .flat()
    .map((b) => b.y + b.height / 2)
    .sort((a, b) => a - b);
  // Rows are as far apart as the type is tall: the words of one line of large type (a title, whose word spaces
  // are as wide as body text's gutters) are one row, not a table.
  const rowGap = 0.6 * Math.max(lh, median(bands.flat().map((b) => b.height)));
  const rows: number[] = [];
  for (const c of centers) if (!rows.length || c - rows[rows.length - 1] > rowGap) rows.push(c);
  if (rows.length < 2) return false;
  // Most parts have a line on most rows.
  let filled = 0;
  for (const pb of bands)
    for (const row of rows) if (pb.some((b) => Math.abs(b.y + b.height / 2 - row) <= rowGap)) filled++;
  // Spanning header cells and grouped rows leave holes; text columns were excluded above.
  return filled >= 0.5 * rows.length * parts.length;
}

/** Vertical gaps of a region: wide enough to be gutters, or where a removed vertical rule stood. */
function verticalGaps(ink: InkMap, r: Box, lh: number, vrules: readonly Box[]): [number, number][] {
  const ruled = vrules.filter(
    (v) =>
      v.x >= r.x &&
      v.x < r.x + r.width &&
      Math.min(v.y + v.height, r.y + r.height) - Math.max(v.y, r.y) >= 0.6 * r.height,
  );
  // Within one line ("5.1   Method", a label and its value) only a wide gap separates blocks; a line of large
  // type (a title) is one line too, and its word spaces are as wide as its size.
  const all = gaps(columnInk(ink, r), 1);
  // Every gap kept below is at least 6 px wide or holds a rule: without one, no need to count the lines.
  if (!ruled.length && !all.some(([a, b]) => b - a >= 6)) return [];
  const short = r.height < 1.6 * lh;
  const bands = short ? [] : lineBands(ink, r, lh);
  const oneLine = short || bands.length === 1;
  // A title of two or three lines of large type: its word spaces are as wide as its size, wider than body text's
  // gutters, so its lines' own size sets the gap, as for one line.
  const large =
    bands.length > 1 && bands.length <= 3 && bands.every((b) => b.height >= 1.4 * lh)
      ? median(bands.map((b) => b.height))
      : 0;
  const min = oneLine ? 3 * Math.max(lh, 0.8 * r.height) : large ? 3 * large : lh;
  const wide = all.filter(
    ([a, b]) => b - a >= Math.max(6, Math.round(min)) || ruled.some((v) => v.x >= r.x + a - 1 && v.x <= r.x + b),
  );
  if (r.height < NARROW_GUTTER.minHeight * lh) return wide;
  // Magazines set columns closer than a line height apart. A narrower gap still parts columns where it runs
  // down a tall region between two wide parts: word spaces do not line up down that many lines.
  const narrow = all.filter(
    ([a, b]) => b - a >= Math.max(6, Math.round(NARROW_GUTTER.minWidth * lh)) && !wide.some(([c]) => c === a),
  );
  const accepted = narrow.filter(([a, b]) => {
    const others = [...wide, ...narrow].filter(([c]) => c !== a);
    const left = Math.max(0, ...others.filter(([, d]) => d <= a).map(([, d]) => d));
    const right = Math.min(r.width, ...others.filter(([c]) => c >= b).map(([c]) => c));
    return a - left >= NARROW_GUTTER.minPart * lh && right - b >= NARROW_GUTTER.minPart * lh;
  });
  return [...wide, ...accepted].sort((p, q) => p[0] - q[0]);
}

/** A gutter narrower than a line height: how tall its region, how wide it and the parts it separates (in lines). */
const NARROW_GUTTER = { minHeight: 8, minWidth: 0.5, minPart: 8 };

/** An ornament: at most this many line heights wide, at least this many tall, and the text beside it this wide. */
export const ORNAMENT = { maxWidth: 4, minHeight: 1.8, minText: 6 };

/**
 * The gap beside an ornament at a region's left or right edge: an icon or a mark set beside a boxed note, as tall
 * as two or more of its lines and one unbroken mass of ink, closer to the text than a gutter. Left in, it joins
 * the note's lines into one band read as garbage.
 */
function ornamentGap(ink: InkMap, r: Box, lh: number): [number, number] | null {
  if (r.height < ORNAMENT.minHeight * lh) return null;
  const cols = columnInk(ink, r);
  const minGap = Math.max(4, Math.round(0.3 * lh));
  const side = (from: number, step: 1 | -1): [number, number] | null => {
    let x = from;
    while (x >= 0 && x < r.width && cols[x] > 0) x += step;
    const inkEnd = x;
    while (x >= 0 && x < r.width && cols[x] === 0) x += step;
    const width = Math.abs(inkEnd - from);
    if (Math.abs(x - inkEnd) < minGap || x < 0 || x >= r.width || width > ORNAMENT.maxWidth * lh) return null;
    const [a, b] = step === 1 ? [inkEnd, x] : [x + 1, inkEnd + 1];
    const mark = trim(
      ink,
      step === 1
        ? { x: r.x, y: r.y, width: a, height: r.height }
        : { x: r.x + b, y: r.y, width: r.width - b, height: r.height },
    );
    const text = trim(
      ink,
      step === 1
        ? { x: r.x + b, y: r.y, width: r.width - b, height: r.height }
        : { x: r.x, y: r.y, width: a, height: r.height },
    );
    if (!mark || !text || mark.height < ORNAMENT.minHeight * lh || text.width < ORNAMENT.minText * lh) return null;
    // One mass: every row of the mark inked (a column of list bullets or line numbers has gaps between lines).
    const rows = rowProfile(ink, mark);
    for (let y = mark.y; y < mark.y + mark.height; y++) if (!rows[y]) return null;
    // Beside two lines or more and taller than they are: a letter of large type is no taller than its line.
    const beside = lineBands(ink, text, lh).filter((t) => t.y < mark.y + mark.height && mark.y < t.y + t.height);
    return beside.length >= 2 && mark.height >= 1.5 * median(beside.map((t) => t.height)) ? [a, b] : null;
  };
  return side(0, 1) ?? side(r.width - 1, -1);
}

/** The leaves of a region, in reading order: blocks, and tables found by the rows their columns share. */
export function xyCut(
  ink: InkMap,
  region: Box,
  lh: number,
  page: { width: number; height: number },
  vrules: readonly Box[],
  depth = 0,
): Leaf[] {
  const r = trim(ink, region);
  if (!r) return [];
  if (depth > 40) return [{ kind: 'block', box: r }];
  // Column gutters first: a gap that runs the full height of the region.
  const found = verticalGaps(ink, r, lh, vrules);
  const ornament = found.length ? null : ornamentGap(ink, r, lh);
  const vgaps = ornament ? [ornament] : found;
  if (vgaps.length) {
    const parts: Box[] = [];
    let x = r.x;
    for (const [a, b] of vgaps) {
      parts.push({ x, y: r.y, width: r.x + a - x, height: r.height });
      x = r.x + b;
    }
    parts.push({ x, y: r.y, width: r.x + r.width - x, height: r.height });
    // Slivers between doubled rules (what rule removal leaves of them) are not columns.
    const real = parts.filter((p) => p.width >= 0.5 * lh && lineBands(ink, p, lh).length > 0);
    if (!ornament && real.length >= 2 && looksLikeTable(ink, real, page, lh))
      return [{ kind: 'table', box: r, parts: real }];
    return parts.flatMap((p) => xyCut(ink, p, lh, page, vrules, depth + 1));
  }
  // Then paragraph gaps: wider than the gap between two lines of one paragraph.
  const hgaps = gaps(rowProfile(ink, r).subarray(r.y, r.y + r.height), Math.max(4, Math.round(0.75 * lh)));
  if (!hgaps.length) return [{ kind: 'block', box: r }];
  const bands: Box[] = [];
  let y = r.y;
  for (const [a, b] of hgaps) {
    bands.push({ x: r.x, y, width: r.width, height: r.y + a - y });
    y = r.y + b;
  }
  bands.push({ x: r.x, y, width: r.width, height: r.y + r.height - y });
  // Bands that share column gutters are one region cut by row gaps (a spaced-out table, or two columns
  // whose paragraph gaps line up): put them back together so the gutter is found at full height.
  const merged: Box[] = [];
  let prevGutters: [number, number][] | null = null;
  for (const band of bands) {
    const t = trim(ink, band);
    const g = t ? verticalGaps(ink, t, lh, vrules).map(([a, b]): [number, number] => [t.x + a, t.x + b]) : [];
    const last = merged[merged.length - 1];
    if (last && prevGutters && prevGutters.length && g.length && sameGutters(prevGutters, g)) {
      merged[merged.length - 1] = { x: r.x, y: last.y, width: r.width, height: band.y + band.height - last.y };
      prevGutters = prevGutters.filter(([a, b]) => g.some(([c, d]) => c < b && a < d));
    } else {
      merged.push(band);
      prevGutters = g;
    }
  }
  if (merged.length === 1) {
    // Every band shares the gutters, yet no gutter runs the full height (a line bridges it): cut at rows.
    return bands.flatMap((b) => xyCut(ink, b, lh, page, vrules, depth + 1));
  }
  return merged.flatMap((b) => xyCut(ink, b, lh, page, vrules, depth + 1));
}

/** Do two bands' gutter lists line up (each gutter of the shorter list overlaps one of the other)? */
function sameGutters(a: [number, number][], b: [number, number][]): boolean {
  const [few, many] = a.length <= b.length ? [a, b] : [b, a];
  if (many.length - few.length > 1) return false;
  return few.every(([x0, x1]) => many.some(([y0, y1]) => y0 < x1 && x0 < y1));
}
