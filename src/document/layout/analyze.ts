/**
 * Page layout from whitespace: rules and pictures are taken out, then a recursive XY-cut splits the page at column
 * gutters (full-height vertical gaps, taken first so that two columns are read one after the other) and at paragraph
 * gaps (horizontal gaps wider than a line gap). A vertical split whose parts share their rows is a table, not columns.
 * Leaves become blocks in reading order, typed by position, size and ink: heading, paragraph, table, figure, page
 * header and footer. List items and page numbers are told apart once the text is known (document/assemble.ts).
 */
import type { GrayPage } from '../decode-image.js';
import { binarize, type Box, inkCount, type InkMap, type Rule, unionBox, wordsOf } from './ink.js';
import { removeRules } from './rule-runs.js';
import { foldFormulaParts, lineBands, median, padLine } from './lines.js';
import { markBoxed } from './boxes.js';
import { takeOutCaptions } from './captions.js';
import { takeOutPictures } from './pictures.js';
import { type LayoutLine, type LayoutTable, tableGrid } from './table-grid.js';
import { type Leaf, ORNAMENT, xyCut } from './xy-cut.js';

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
 * A table the cut left in pieces, put back together: a heading over several columns breaks the gutters the cut found
 * it by, and a gap under the headings (or a shaded band lower down) parts them as a paragraph gap would. Blocks beside
 * it (overlapping its rows, or within two lines above or below) and within its width join it when they are: headings
 * over its value columns (every line right of its stub column); labels in its stub column (wholly left of its first
 * value column) overlapping its rows or level with a joined heading; or another piece of table (beside it, or above
 * or below with the same columns). Nothing else may lie in the joined box (else it stays); its grid is found anew.
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
export function lineHeightOf(ink: InkMap): number {
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

/** What a text leaf is typed against: the page, its ink, its body text's line height and ink density. */
interface PageScale {
  ink: InkMap;
  page: GrayPage;
  pageLh: number;
  typicalDensity: number;
}

/**
 * A text leaf as a block (`bands` as printed, `read` the lines read): a figure where its ink is a picture's, else
 * typed by position, size and ink. Null where there is nothing to read.
 */
function textLeafBlock(box: Box, bands: Box[], read: Box[], scale: PageScale): LayoutBlock | null {
  const { ink, page, pageLh, typicalDensity } = scale;
  const lines = read.map((b) => ({ band: b, box: padLine(b, page, undefined) }));
  const lineH = median(bands.map((b) => b.height));
  // A thin leaf without text is a rule or an ornament: nothing to read, nothing to keep.
  if (!bands.length && box.height < 1.5 * pageLh) return null;
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
    return { type: 'figure', box, lines: [] };
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
  return { type, box, lines, ...(level ? { level } : {}) };
}

/**
 * Each picture (and its caption) follows the first block, in reading order, that its top sits beside (the
 * text it interrupts), or else precedes the first block below it in its span.
 */
function placePictures(blocks: LayoutBlock[], pictures: readonly Box[], captions: Box[][], page: GrayPage): void {
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
}

export function analyzeLayout(page: GrayPage, measured?: number): PageLayout {
  const ink = binarize(page);
  const full = { x: 0, y: 0, width: page.width, height: page.height };
  // Rules are runs far longer than any letter's stroke: a few line heights (cell borders included). `measured`:
  // lineHeightOf this page's ink, where the caller has it already.
  const lh0 = measured ?? lineHeightOf(ink);
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
    const block = textLeafBlock(leaf.box, bands, read, { ink, page, pageLh, typicalDensity });
    if (block) blocks.push(block);
  }
  consolidateTables(blocks, ink, pageLh, page, hrules);
  markBoxed(blocks, hrules, pageLh);
  placePictures(blocks, pictures, captions, page);
  return { width: page.width, height: page.height, lineHeight: pageLh, blocks, rules };
}
