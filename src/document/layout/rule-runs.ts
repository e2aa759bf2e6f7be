/**
 * Long straight ink runs erased as rules (removeRules): the row and the column scans that mark them, four pixels
 * at a time where they can, and their grouping into rules that are erased from the ink.
 */
import { type InkMap, type Rule, wordsOf } from './ink.js';

/** A word of four ink pixels that are all ink (each byte 1), whatever the byte order. */
const ALL_INK = 0x01010101;

/** Pixels in runs long enough to be rules, and which rows (for horizontal runs) or columns (vertical) hold any. */
export interface RunMask {
  mask: Uint8Array;
  has: Uint8Array;
}

/** The pixels of horizontal ink runs at least `minLength` long. */
export function horizontalRuns(ink: InkMap, words: Uint32Array, minLength: number): RunMask {
  const { width: w, height: h, data } = ink;
  const off = data.byteOffset;
  // Horizontal: runs along rows. `hasH` marks the rows that hold any (most hold none).
  const hMask = new Uint8Array(w * h);
  const hasH = new Uint8Array(h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let start = -1;
    let x = 0;
    while (x < w) {
      if (((off + row + x) & 3) === 0 && x + 4 <= w) {
        const v = words[(off + row + x) >> 2];
        if ((v === 0 && start < 0) || (v === ALL_INK && start >= 0)) {
          x += 4;
          continue;
        }
      }
      if (data[row + x] === 1) {
        if (start < 0) start = x;
      } else if (start >= 0) {
        if (x - start >= minLength) {
          hMask.fill(1, row + start, row + x);
          hasH[y] = 1;
        }
        start = -1;
      }
      x++;
    }
    if (start >= 0 && w - start >= minLength) {
      hMask.fill(1, row + start, row + w);
      hasH[y] = 1;
    }
  }
  return { mask: hMask, has: hasH };
}

/** The pixels of vertical ink runs at least `minLength` long. */
export function verticalRuns(ink: InkMap, words: Uint32Array, minLength: number): RunMask {
  const { width: w, height: h, data } = ink;
  const off = data.byteOffset;
  // Vertical: runs along columns, found row by row (each column's open run in `start`, -1 where none is): the page
  // is read in memory order, not a column at a time across every row. Four columns are all closed when the AND of
  // their starts is negative.
  const vMask = new Uint8Array(w * h);
  const hasV = new Uint8Array(w);
  const start = new Int32Array(w).fill(-1);
  const close = (x: number, y: number): void => {
    if (y - start[x] >= minLength) {
      for (let k = start[x]; k < y; k++) vMask[k * w + x] = 1;
      hasV[x] = 1;
    }
    start[x] = -1;
  };
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let x = 0;
    while (x < w) {
      if (((off + row + x) & 3) === 0 && x + 4 <= w) {
        const v = words[(off + row + x) >> 2];
        if (v === 0 && (start[x] & start[x + 1] & start[x + 2] & start[x + 3]) < 0) {
          x += 4;
          continue;
        }
        if (v === ALL_INK && (start[x] | start[x + 1] | start[x + 2] | start[x + 3]) >= 0) {
          x += 4;
          continue;
        }
      }
      if (data[row + x] === 1) {
        if (start[x] < 0) start[x] = y;
      } else if (start[x] >= 0) close(x, y);
      x++;
    }
  }
  for (let x = 0; x < w; x++) if (start[x] >= 0) close(x, h);
  return { mask: vMask, has: hasV };
}

/**
 * Group masked rows (columns) into rules no thicker than maxThickness, erase them from the ink and add them to
 * `rules`; thicker runs are solid shapes (figures).
 */
export function eraseRuns(
  ink: InkMap,
  { mask, has }: RunMask,
  horizontal: boolean,
  maxThickness: number,
  rules: Rule[],
): void {
  const { width: w, height: h, data } = ink;
  const outer = horizontal ? h : w;
  const inner = horizontal ? w : h;
  const at = (o: number, i: number): number => (horizontal ? o * w + i : i * w + o);
  let o = 0;
  while (o < outer) {
    if (!has[o]) {
      o++;
      continue;
    }
    let any = false;
    let lo = inner;
    let hi = -1;
    for (let i = 0; i < inner; i++) {
      if (mask[at(o, i)]) {
        any = true;
        lo = Math.min(lo, i);
        hi = Math.max(hi, i);
      }
    }
    if (!any) {
      o++;
      continue;
    }
    let end = o + 1;
    while (end < outer) {
      let next = false;
      for (let i = lo; i <= hi && !next; i++) if (mask[at(end, i)]) next = true;
      if (!next) break;
      end++;
    }
    if (end - o <= maxThickness) {
      for (let oo = o; oo < end; oo++) for (let i = 0; i < inner; i++) if (mask[at(oo, i)]) data[at(oo, i)] = 0;
      rules.push(
        horizontal
          ? { orientation: 'horizontal', box: { x: lo, y: o, width: hi - lo + 1, height: end - o } }
          : { orientation: 'vertical', box: { x: o, y: lo, width: end - o, height: hi - lo + 1 } },
      );
    }
    o = end;
  }
}

/**
 * Erase straight ink runs longer than `minLength` and at most `maxThickness` thick; return them as rules.
 * Text strokes are short, so only rules (table borders, underlines across a column) qualify.
 *
 * Both scans step four pixels at a time where they can (a 32-bit word of the buffer): past a word with no ink
 * where no run is open, and past a word all ink where every run is open. Byte at a time, they were a fifth of the
 * layout worker's time on docling's pages.
 */
export function removeRules(ink: InkMap, minLength: number, maxThickness = 6): Rule[] {
  const words = wordsOf(ink.data);
  const rules: Rule[] = [];
  const horizontal = horizontalRuns(ink, words, minLength);
  const vertical = verticalRuns(ink, words, minLength);
  eraseRuns(ink, horizontal, true, maxThickness, rules);
  eraseRuns(ink, vertical, false, maxThickness, rules);
  return rules;
}
