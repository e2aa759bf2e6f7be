/**
 * The page's background made white, so that everything after it (skew, layout, the model's crops) sees dark ink
 * on white paper: a shaded box, a grey gradient behind the text, a scan's tinted paper, and light text on a dark
 * panel (inverted, so the model, trained on dark-on-light lines, reads it). One global Otsu threshold turns a
 * large grey panel into ink and its white text into holes; this is a local, per-cell, estimate instead.
 *
 * A cell's background is learnt only where the flat cells around it (most of a cell's pixels near its median:
 * paper, or a panel's fill, with some text on it) agree on one tone. Elsewhere (a photograph's varying tones,
 * a drawing, text too dense to leave flat cells) the page is left as it is: a photograph is never "normalised"
 * into its own background or turned negative. Clean white paper is returned untouched.
 */
import type { GrayPage } from './decode-image.js';
import { wordsOf } from './layout/ink.js';

/** Cell side in pixels: under a line's height at 200 dpi, so a panel's edge is found to within a cell. */
const CELL = 16;
/** Background and polarity are voted over (2 REACH + 1)^2 cells: wider than a bold heading's strokes. */
const REACH = 3;
/** A background needs this many flat cells around it, one tone: their middle half within MAX_TONE_SPREAD. */
const MIN_VOTES = 12;
const MAX_TONE_SPREAD = 10;
/** A cell is flat when this share of its pixels lies within FLAT_SPREAD grey levels of its median. */
const FLAT_SHARE = 0.55;
const FLAT_SPREAD = 24;
/** A pixel this far from its background, lighter or darker, is a stroke; which side wins sets the polarity. */
const STROKE = 40;
/** Backgrounds within this of white are paper: left alone, never inverted. */
const PAPER = 250;
/**
 * A fill darker than this is not inverted (a halftone's or a photograph's dark mass is flat too, and the
 * specks in it are not text), and a fill darker than LIGHT_FILL with dark strokes is a picture: both are left
 * as they are, for the picture finder.
 */
const DARKEST_PANEL = 48;
const LIGHT_FILL = 128;
/** Light strokes must cover this share of the cells around to call them text on a dark fill. */
const MIN_LIGHT = 0.02;

interface CellStats {
  cols: number;
  rows: number;
  /** Median grey of each cell. */
  median: Uint8Array;
  flat: Uint8Array;
}

/** Whether every pixel of a cell is 255, checked four pixels at a time where a row's pixels fall in whole words. */
function allWhite(
  data: Uint8Array,
  words: Uint32Array,
  width: number,
  x0: number,
  x1: number,
  y0: number,
  y1: number,
): boolean {
  const off = data.byteOffset;
  for (let y = y0; y < y1; y++) {
    let i = y * width + x0;
    const end = y * width + x1;
    while (i < end && ((off + i) & 3) !== 0) if (data[i++] !== 255) return false;
    for (; i + 4 <= end; i += 4) if (words[(off + i) >> 2] !== 0xffffffff) return false;
    while (i < end) if (data[i++] !== 255) return false;
  }
  return true;
}

function cellStats(page: GrayPage): CellStats {
  const cols = Math.ceil(page.width / CELL);
  const rows = Math.ceil(page.height / CELL);
  const median = new Uint8Array(cols * rows);
  const flat = new Uint8Array(cols * rows);
  // The histogram is touched, searched and cleared only between the cell's darkest and lightest grey, because a
  // cell of paper spans a few levels, not 256.
  const hist = new Uint32Array(256);
  const { data } = page;
  const words = wordsOf(data);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const x1 = Math.min(page.width, (cx + 1) * CELL);
      const y1 = Math.min(page.height, (cy + 1) * CELL);
      if (allWhite(data, words, page.width, cx * CELL, x1, cy * CELL, y1)) {
        // Paper: median white, and flat (every pixel at it). Most cells of a clean page.
        median[cy * cols + cx] = 255;
        flat[cy * cols + cx] = 1;
        continue;
      }
      let lo = 255;
      let hi = 0;
      for (let y = cy * CELL; y < y1; y++) {
        const row = y * page.width;
        for (let x = cx * CELL; x < x1; x++) {
          const g = data[row + x];
          hist[g]++;
          if (g < lo) lo = g;
          if (g > hi) hi = g;
        }
      }
      const n = (x1 - cx * CELL) * (y1 - cy * CELL);
      let seen = 0;
      let m = lo;
      while (m < hi && seen + hist[m] <= n / 2) seen += hist[m++];
      let near = 0;
      for (let g = Math.max(lo, m - FLAT_SPREAD); g <= Math.min(hi, m + FLAT_SPREAD); g++) near += hist[g];
      hist.fill(0, lo, hi + 1);
      median[cy * cols + cx] = m;
      flat[cy * cols + cx] = near >= FLAT_SHARE * n ? 1 : 0;
    }
  }
  return { cols, rows, median, flat };
}

/**
 * Each cell's background: the median of the flat cells around it (a bold stroke's solid cells are outvoted by
 * the paper around them) where they agree on one tone.
 */
function backgrounds(s: CellStats): Float32Array {
  // -1 where none is found: the cell stays as it is.
  const { cols, rows } = s;
  const bg = new Float32Array(cols * rows).fill(-1);
  const { flat, median } = s;
  const all = new Uint8Array((2 * REACH + 1) ** 2);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      let n = 0;
      for (let y = Math.max(0, cy - REACH); y <= Math.min(rows - 1, cy + REACH); y++) {
        for (let x = Math.max(0, cx - REACH), i = y * cols + x; x <= Math.min(cols - 1, cx + REACH); x++, i++)
          if (flat[i]) all[n++] = median[i];
      }
      if (n < MIN_VOTES) continue;
      const votes = all.subarray(0, n).sort();
      // Paper and a panel's fill are one tone across the window; a photograph's smooth parts are flat cell by
      // cell but vary across it, and must not be "flattened" into its own background.
      if (votes[(n * 3) >> 2] - votes[n >> 2] > MAX_TONE_SPREAD) continue;
      bg[cy * cols + cx] = votes[n >> 1];
    }
  }
  // Cells without one (a photograph, a drawing, text too dense to leave flat cells near) stay as they are.
  return bg;
}

/**
 * Per cell, whether its strokes are lighter than its background (light text on a dark fill): the strokes
 * lighter and darker than their cells' backgrounds are counted around it, and the lighter ones must win.
 */
function inverted(page: GrayPage, s: CellStats, bg: Float32Array): Uint8Array {
  const { cols, rows } = s;
  // Strokes are counted only in cells whose counts are read: those within REACH of a cell that could be a panel.
  const counted = new Uint8Array(cols * rows);
  let any = false;
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const b = bg[cy * cols + cx];
      if (b >= PAPER || b < DARKEST_PANEL) continue;
      any = true;
      for (let y = Math.max(0, cy - REACH); y <= Math.min(rows - 1, cy + REACH); y++)
        counted.fill(1, y * cols + Math.max(0, cx - REACH), y * cols + Math.min(cols - 1, cx + REACH) + 1);
    }
  }
  if (!any) return new Uint8Array(cols * rows);
  const light = new Uint32Array(cols * rows);
  const dark = new Uint32Array(cols * rows);
  for (let y = 0; y < page.height; y++) {
    const row = y * page.width;
    const crow = ((y / CELL) | 0) * cols;
    for (let cx = 0; cx < cols; cx++) {
      const c = crow + cx;
      if (!counted[c] || bg[c] < 0) continue;
      const x1 = Math.min(page.width, (cx + 1) * CELL);
      for (let x = cx * CELL; x < x1; x++) {
        const d = page.data[row + x] - bg[c];
        if (d > STROKE) light[c]++;
        else if (d < -STROKE) dark[c]++;
      }
    }
  }
  const out = new Uint8Array(cols * rows);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const b = bg[cy * cols + cx];
      if (b >= PAPER || b < DARKEST_PANEL) continue;
      let l = 0;
      let d = 0;
      let n = 0;
      for (let y = Math.max(0, cy - REACH); y <= Math.min(rows - 1, cy + REACH); y++) {
        for (let x = Math.max(0, cx - REACH), i = y * cols + x; x <= Math.min(cols - 1, cx + REACH); x++, i++) {
          l += light[i];
          d += dark[i];
          n++;
        }
      }
      out[cy * cols + cx] = l > 2 * d && l >= MIN_LIGHT * n * CELL * CELL ? 1 : 0;
    }
  }
  return out;
}

/** The page with its background flattened to white (the same object when it is clean paper throughout). */
export function flattenBackground(page: GrayPage): GrayPage {
  const stats = cellStats(page);
  const bg = backgrounds(stats);
  if (bg.every((b) => b >= PAPER || b < 0)) return page;
  const inv = inverted(page, stats, bg);
  const { cols, rows } = stats;
  const isBackground = (p: number, b: number): boolean => b >= 0 && Math.abs(p - b) <= STROKE;
  // Cells whose pixels come out as they went in: not inverted, not a light fill to lift, and no neighbour of the
  // other polarity (whose edge test could apply). They are copied a row segment at a time.
  const same = new Uint8Array(cols * rows);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const c = cy * cols + cx;
      const b = bg[c];
      if (inv[c] || (b >= LIGHT_FILL && b < PAPER)) continue;
      let mixed = false;
      for (let y = Math.max(0, cy - 1); y <= Math.min(rows - 1, cy + 1) && !mixed; y++) {
        for (let x = Math.max(0, cx - 1); x <= Math.min(cols - 1, cx + 1); x++) if (inv[y * cols + x]) mixed = true;
      }
      if (!mixed) same[c] = 1;
    }
  }
  const out = new Uint8Array(page.data.length);
  for (let y = 0; y < page.height; y++) {
    const row = y * page.width;
    const cy = Math.min(rows - 1, (y / CELL) | 0);
    // The neighbour cells a pixel near this one's edge might belong to (the next cell up or down, left or right).
    const ny = Math.min(rows - 1, Math.max(0, y % CELL < CELL / 2 ? cy - 1 : cy + 1));
    for (let cx = 0; cx < cols; cx++) {
      const x0 = cx * CELL;
      const x1 = Math.min(page.width, x0 + CELL);
      const c = cy * cols + cx;
      if (same[c]) {
        out.set(page.data.subarray(row + x0, row + x1), row + x0);
        continue;
      }
      const b = bg[c];
      const up = ny * cols + cx;
      for (let x = x0; x < x1; x++) {
        const nx = Math.min(cols - 1, Math.max(0, x % CELL < CELL / 2 ? cx - 1 : cx + 1));
        const p = page.data[row + x];
        const side = cy * cols + nx;
        const corner = ny * cols + nx;
        // Where cells of both polarities meet (a panel's edge), a pixel at either side's background is background:
        // otherwise the paper beside a dark panel, seen from the panel's cell, would turn into a bar of ink.
        if (inv[c] !== inv[up] || inv[c] !== inv[side] || inv[c] !== inv[corner]) {
          if (
            isBackground(p, b) ||
            isBackground(p, bg[up]) ||
            isBackground(p, bg[side]) ||
            isBackground(p, bg[corner])
          ) {
            out[row + x] = 255;
            continue;
          }
        }
        let v = p;
        if (inv[c]) v = p <= b ? 255 : 255 - ((p - b) * 255) / (255 - b);
        else if (b >= LIGHT_FILL && b < PAPER) v = p >= b ? 255 : (p * 255) / b;
        out[row + x] = v;
      }
    }
  }
  return { width: page.width, height: page.height, data: out };
}
