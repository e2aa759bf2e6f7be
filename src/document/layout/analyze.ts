/**
 * Page layout from whitespace: rules and pictures are taken out, then a recursive XY-cut splits the page at column
 * gutters (full-height vertical gaps, taken first so that two columns are read one after the other) and at paragraph
 * gaps (horizontal gaps wider than a line gap). A vertical split whose parts share their rows is a table, not columns.
 * Leaves become blocks in reading order, typed by position, size and ink: heading, paragraph, table, figure, page
 * header and footer. List items and page numbers are told apart once the text is known (document/assemble.ts).
 */
import type { GrayPage } from '../decode-image.js';
import {
  binarize,
  type Box,
  columnInk,
  firstInk,
  inkCount,
  type InkMap,
  lastInk,
  removeRules,
  type Rule,
  unionBox,
  wordsOf,
} from './ink.js';
import { foldFormulaParts, lineBands, median, padLine, rowProfile } from './lines.js';
import { markBoxed } from './boxes.js';
import { takeOutCaptions } from './captions.js';
import { takeOutPictures } from './pictures.js';
import { type LayoutLine, type LayoutTable, tableGrid } from './table-grid.js';

export const BLOCK_TYPES = [
  'heading',
  'paragraph',
  'list_item',
  'code',
  'table',
  'figure',
  'formula',
  'page_header',
  'page_footer',
  'page_number',
] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

export type { LayoutLine, LayoutTable, TableSpan } from './table-grid.js';

export interface LayoutBlock {
  type: BlockType;
  box: Box;
  lines: LayoutLine[];
  /** Heading level, 1 for the largest type. */
  level?: number;
  table?: LayoutTable;
  /** Set between two rules, as a note or a warning is (boxes.ts). */
  boxed?: boolean;
}

export interface PageLayout {
  width: number;
  height: number;
  /** Median height of a text line on this page (pixels): the unit every gap is measured in. */
  lineHeight: number;
  blocks: LayoutBlock[];
  rules: Rule[];
  /** Clockwise quarter turns the page was given before this layout (boxes are in the turned page's pixels). */
  rotation?: number;
}

/** The layout of an image that is one line of text: one paragraph, one line, the whole image. */
export function oneLineLayout(page: { width: number; height: number }): PageLayout {
  const box = { x: 0, y: 0, width: page.width, height: page.height };
  return {
    width: page.width,
    height: page.height,
    lineHeight: page.height,
    blocks: [{ type: 'paragraph', box, lines: [{ box, band: box }] }],
    rules: [],
  };
}

type Leaf = { kind: 'block'; box: Box } | { kind: 'table'; box: Box; parts: Box[] };

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
const ORNAMENT = { maxWidth: 4, minHeight: 1.8, minText: 6 };

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

function xyCut(
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

function inkDensity(ink: InkMap, b: Box): number {
  return inkInBox(ink, b) / Math.max(1, b.width * b.height);
}

/**
 * The ink pixels in a box, a row at a time four pixels at a time. Its loop is all there is: code after a loop that
 * is compiled on-stack during a function's first call has not run yet, and that compiled code deoptimised there on
 * every later call.
 */
function inkInBox(ink: InkMap, b: Box): number {
  const { data, width } = ink;
  const words = wordsOf(data);
  let n = 0;
  for (let y = b.y, base = b.y * width + b.x; y < b.y + b.height; y++, base += width)
    n += inkCount(data, words, base, base + b.width);
  return n;
}

/**
 * Whether a band reads as a line of type: empty columns split its ink into letters or words, at least one for
 * each two band heights of width. Large bold type (a cover's title) is as dense as a photograph, but a
 * photograph's columns are not empty in its middle.
 */
function splitLikeType(ink: InkMap, b: Box): boolean {
  const cols = new Uint8Array(b.width);
  let first = -1;
  let last = -1;
  for (let x = 0; x < b.width; x++) {
    for (let y = b.y; y < b.y + b.height; y++) {
      if (ink.data[y * ink.width + b.x + x]) {
        cols[x] = 1;
        break;
      }
    }
    if (cols[x]) {
      if (first < 0) first = x;
      last = x;
    }
  }
  const minGap = Math.max(2, Math.round(0.05 * b.height));
  let gaps = 0;
  let run = 0;
  for (let x = first; x >= 0 && x <= last; x++) {
    if (!cols[x]) run++;
    else {
      if (run >= minGap) gaps++;
      run = 0;
    }
  }
  return gaps >= Math.max(1, Math.floor((last - first + 1) / (2 * b.height)));
}

function weightedMedian(pairs: [number, number][]): number {
  const s = [...pairs].sort((a, b) => a[0] - b[0]);
  const total = s.reduce((t, [, w]) => t + w, 0);
  let acc = 0;
  for (const [v, w] of s) {
    acc += w;
    if (acc >= total / 2) return v;
  }
  return 0;
}

/**
 * A table the cut left in pieces, put back together. A heading over several columns breaks the gutters the cut
 * found the table by, and a gap under the headings parts them from the body as a paragraph would; a shaded band
 * across the table does the same lower down. So blocks beside a table (overlapping its rows, or within two lines
 * above or below it) and within its width join it when they are: headings over its value columns (every line right
 * of its stub column); labels in its stub column (the whole block left of its first value column) that overlap its
 * rows or sit level with a heading that joined; or another piece of table (beside it, or above or below it with
 * the same columns). Nothing else may lie within the joined box (else the table stays as it was); its grid is then
 * found again over the whole.
 */
function consolidateTables(
  blocks: LayoutBlock[],
  ink: InkMap,
  lh: number,
  page: GrayPage,
  hrules: readonly Box[],
): void {
  const textual: BlockType[] = ['heading', 'paragraph', 'table'];
  for (let t = 0; t < blocks.length; t++) {
    const start = blocks[t];
    if (start.type !== 'table' || !start.table || !start.table.rows) continue;
    const grid = start.table;
    const stubRight = Math.max(
      ...grid.cells
        .map((row) => row[0] ?? [])
        .flat()
        .map((l) => l.band.x + l.band.width),
      start.box.x,
    );
    const valueLeft = Math.min(
      ...grid.cells
        .flatMap((row) => row.slice(1))
        .flat()
        .map((l) => l.band.x),
      start.box.x + start.box.width,
    );
    const joined = new Set<LayoutBlock>([start]);
    let box = start.box;
    const heads: Box[] = [];
    for (let changed = true; changed;) {
      changed = false;
      for (const b of blocks) {
        if (joined.has(b) || !textual.includes(b.type)) continue;
        const r = b.box;
        const within = r.x >= box.x - 0.5 * lh && r.x + r.width <= box.x + box.width + 0.5 * lh;
        const near = r.y + r.height >= box.y - 2 * lh && r.y <= box.y + box.height + 2 * lh;
        if (!within || !near) continue;
        const overlapsRows = r.y < box.y + box.height && r.y + r.height > box.y;
        const overValues =
          b.lines.length > 0 &&
          b.lines.every((l) => l.band.x >= stubRight) &&
          (b.table ? b.table.rows : b.lines.length) <= 4;
        const inStub =
          r.x + r.width <= valueLeft && (overlapsRows || heads.some((h) => Math.abs(h.y - r.y) <= 0.5 * lh));
        // Another piece of this table: beside its rows, or just above or below with the same columns edge to edge.
        const sameColumns =
          b.table?.cols === grid.cols &&
          Math.abs(r.x - box.x) <= lh &&
          Math.abs(r.x + r.width - (box.x + box.width)) <= lh;
        const piece = b.type === 'table' && (overlapsRows || sameColumns);
        if (!overValues && !inStub && !piece) continue;
        if (overValues && !overlapsRows) heads.push(r);
        joined.add(b);
        box = unionBox([box, r]);
        changed = true;
      }
    }
    if (joined.size === 1) continue;
    // Nothing left out may lie within the joined box: it would be read twice, or not at all.
    if (
      blocks.some(
        (b) =>
          !joined.has(b) &&
          b.box.x < box.x + box.width &&
          box.x < b.box.x + b.box.width &&
          b.box.y < box.y + box.height &&
          box.y < b.box.y + b.box.height,
      )
    )
      continue;
    const merged = tableGrid(ink, lineBands(ink, box, lh), lh, page, box, hrules);
    const table: LayoutBlock = { type: 'table', box, lines: merged.cells.flat(2), table: merged };
    // In reading order where its first piece was.
    const first = blocks.findIndex((b) => joined.has(b));
    const rest = blocks.filter((b) => !joined.has(b));
    rest.splice(first, 0, table);
    blocks.splice(0, blocks.length, ...rest);
    t = first;
  }
}

/**
 * The page's line height from its row profile. Where something inks every row (a scan's dark border, a photo
 * beside the text) the whole page is one "line": then it is measured in eight vertical strips instead.
 */
function lineHeightOf(ink: InkMap): number {
  const whole = median(lineBands(ink, { x: 0, y: 0, width: ink.width, height: ink.height }).map((b) => b.height)) || 20;
  const w = Math.floor(ink.width / 8);
  const strips =
    median(
      Array.from({ length: 8 }, (_, i) =>
        lineBands(ink, { x: i * w, y: 0, width: w, height: ink.height }).map((b) => b.height),
      ).flat(),
    ) || whole;
  return whole > 2 * strips ? strips : whole;
}

/** The smallest band, in line heights, that can hold text. */
const MIN_BAND = 0.3;

export function analyzeLayout(page: GrayPage): PageLayout {
  const ink = binarize(page);
  const full = { x: 0, y: 0, width: page.width, height: page.height };
  // Rules are runs far longer than any letter's stroke: a few line heights (cell borders included).
  const lh0 = lineHeightOf(ink);
  const rules = removeRules(ink, Math.max(40, Math.round(4 * lh0)));
  // Rules are erased only where found: without any the ink, and so its line height, is unchanged.
  const lhRules = rules.length ? lineHeightOf(ink) : lh0;
  // Pictures next, so the gutters they bridge show; the line height is measured again without their "lines".
  const pictures = takeOutPictures(ink, lhRules);
  const lh = pictures.length ? lineHeightOf(ink) : lhRules;
  const captions = takeOutCaptions(ink, pictures, lh);
  const vrules = rules.filter((r) => r.orientation === 'vertical').map((r) => r.box);
  const hrules = rules.filter((r) => r.orientation === 'horizontal').map((r) => r.box);
  const leaves = xyCut(ink, full, lh, page, vrules);
  const blocks: LayoutBlock[] = [];
  const bodyDensity: number[] = [];
  const pending: { leaf: Leaf; bands: Box[]; read: Box[] }[] = leaves.map((leaf) => {
    // A band under a third of a line height is a speck row or a dotted rule: no type is set that small.
    const bands = leaf.kind === 'block' ? lineBands(ink, leaf.box, lh).filter((b) => b.height >= MIN_BAND * lh) : [];
    // The lines read: a formula's limits and a fraction's parts are one line with it. (Sizes and types are
    // measured on the bands as printed: a formula's folded line is not large type, nor a picture.)
    return { leaf, bands, read: foldFormulaParts(bands, lh) };
  });
  for (const p of pending) for (const b of p.bands) bodyDensity.push(inkDensity(ink, b));
  const typicalDensity = median(bodyDensity);
  // Body text sets the scale: a width-weighted median, so long lines of running text outweigh short cells.
  const pageLh =
    weightedMedian(pending.flatMap((p) => p.bands.map((b) => [b.height, b.width] as [number, number]))) || lh;
  for (const { leaf, bands, read } of pending) {
    if (leaf.kind === 'table') {
      const table = tableGrid(ink, lineBands(ink, leaf.box, pageLh), pageLh, page, leaf.box, hrules, leaf.parts);
      blocks.push({ type: 'table', box: leaf.box, lines: table.cells.flat(2), table });
      continue;
    }
    const box = leaf.box;
    const lines = read.map((b) => ({ band: b, box: padLine(b, page, undefined) }));
    const lineH = median(bands.map((b) => b.height));
    // A thin leaf without text is a rule or an ornament: nothing to read, nothing to keep.
    if (!bands.length && box.height < 1.5 * pageLh) continue;
    // Pictures: a tall area of dense ink (unless every "line" of it is type: letters apart), or of "lines" far
    // taller than any title.
    const tall = box.height > 2.5 * pageLh;
    const isType = (): boolean => lineH <= 3.5 * pageLh && bands.every((b) => splitLikeType(ink, b));
    // An ornament (an icon cut from beside a note): one band as tall as two lines, no letters apart in it.
    const ornament =
      bands.length === 1 &&
      lineH >= ORNAMENT.minHeight * pageLh &&
      box.width <= ORNAMENT.maxWidth * pageLh &&
      !splitLikeType(ink, bands[0]);
    if (
      !bands.length ||
      ornament ||
      (tall && inkDensity(ink, box) > 0.3 && !isType()) ||
      (box.height > 4 * pageLh && lineH > 3.5 * pageLh)
    ) {
      blocks.push({ type: 'figure', box, lines: [] });
      continue;
    }
    const bottom = box.y + box.height;
    let type: BlockType = 'paragraph';
    let level: number | undefined;
    if (bands.length <= 2 && bottom < 0.08 * page.height) type = 'page_header';
    else if (bands.length <= 2 && box.y > 0.92 * page.height) type = 'page_footer';
    else if (bands.length <= 3 && lineH >= 1.25 * pageLh) {
      type = 'heading';
      level = lineH >= 1.6 * pageLh ? 1 : 2;
    } else if (
      bands.length <= 2 &&
      box.width < 0.8 * page.width &&
      Math.min(...bands.map((b) => inkDensity(ink, b))) >= 1.25 * typicalDensity
    ) {
      // bold, body-sized, every line of it (a bold label over a plain line is a note's, not a heading)
      type = 'heading';
      level = 3;
    }
    blocks.push({ type, box, lines, ...(level ? { level } : {}) });
  }
  consolidateTables(blocks, ink, pageLh, page, hrules);
  markBoxed(blocks, hrules, pageLh);
  // Each picture (and its caption) follows the first block, in reading order, that its top sits beside (the
  // text it interrupts), or else precedes the first block below it in its span.
  pictures.forEach((pic, i) => {
    const across = (b: LayoutBlock): boolean => b.box.x < pic.x + pic.width && pic.x < b.box.x + b.box.width;
    const beside = blocks.findIndex((b) => across(b) && b.box.y <= pic.y && pic.y <= b.box.y + b.box.height);
    const below = blocks.findIndex((b) => across(b) && b.box.y >= pic.y);
    const at = beside >= 0 ? beside + 1 : below;
    const own: LayoutBlock[] = [{ type: 'figure', box: pic, lines: [] }];
    const cap = captions[i];
    if (cap.length) {
      const x = Math.min(...cap.map((c) => c.x));
      const y = cap[0].y;
      const box = {
        x,
        y,
        width: Math.max(...cap.map((c) => c.x + c.width)) - x,
        height: cap[cap.length - 1].y + cap[cap.length - 1].height - y,
      };
      own.push({ type: 'paragraph', box, lines: cap.map((band) => ({ band, box: padLine(band, page, undefined) })) });
    }
    blocks.splice(at < 0 ? blocks.length : at, 0, ...own);
  });
  return { width: page.width, height: page.height, lineHeight: pageLh, blocks, rules };
}
