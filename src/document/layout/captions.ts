/**
 * Captions squeezed between columns: a picture set across a gutter, text wrapped around it, and its caption
 * centred below it with column text on either side in the same rows. Such a caption bridges the gutter the
 * XY-cut needs, so it is read as a block of its own (after its picture) and taken out of the ink map.
 *
 * A caption line is a run of ink below the picture, inside its span, narrower than it, and set apart from any
 * other ink in its rows by at least a line height. Body text below a picture that fills one column spans the
 * picture's width, so it never qualifies.
 */
import type { Box, InkMap } from './ink.js';
import { lineBands } from './lines.js';

/** How far below the picture a caption may start, and how far apart its lines may be (in line heights). */
const FIRST_GAP = 1.5;
const LINE_GAP = 1;
/** The most lines a caption has. */
const MAX_LINES = 10;

/** The caption lines under each picture (empty where there is none); their ink is erased from `ink`. */
export function takeOutCaptions(ink: InkMap, pictures: readonly Box[], lh: number): Box[][] {
  return pictures.map((pic) => {
    const zone: Box = {
      x: pic.x,
      y: pic.y + pic.height,
      width: pic.width,
      height: Math.min(ink.height - pic.y - pic.height, Math.round((FIRST_GAP + MAX_LINES * 1.6) * lh)),
    };
    if (zone.height <= 0) return [];
    const lines: Box[] = [];
    let bottom = zone.y;
    for (const band of lineBands(ink, zone, lh)) {
      if (band.y - bottom > (lines.length ? LINE_GAP : FIRST_GAP) * lh || lines.length >= MAX_LINES) break;
      // Column text may reach into the picture's span on these rows: look at each run of ink on its own.
      const runs = runsOf(ink, band, lh);
      const caption = runs.find(
        (r) => r.x >= pic.x - lh / 2 && r.x + r.width <= pic.x + pic.width + lh / 2 && r.width <= 0.9 * pic.width,
      );
      if (!caption) break;
      lines.push(caption);
      bottom = band.y + band.height;
    }
    for (const l of lines)
      for (let y = l.y; y < l.y + l.height; y++) ink.data.fill(0, y * ink.width + l.x, y * ink.width + l.x + l.width);
    return lines;
  });
}

/** The runs of ink on the band's rows across the whole page, split where a line height of paper separates them. */
function runsOf(ink: InkMap, band: Box, lh: number): Box[] {
  const cols = new Int32Array(ink.width);
  for (let y = band.y; y < band.y + band.height; y++) {
    const base = y * ink.width;
    for (let x = 0; x < ink.width; x++) cols[x] += ink.data[base + x];
  }
  const gap = Math.max(4, Math.round(lh));
  const runs: Box[] = [];
  let start = -1;
  let last = -1;
  for (let x = 0; x <= ink.width; x++) {
    const on = x < ink.width && cols[x] > 0;
    if (on) {
      if (start < 0) start = x;
      last = x;
    } else if (start >= 0 && (x - last > gap || x === ink.width)) {
      runs.push({ x: start, y: band.y, width: last - start + 1, height: band.height });
      start = -1;
    }
  }
  return runs;
}
