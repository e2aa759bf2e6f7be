/**
 * The page as ink: Otsu binarisation, and long horizontal and vertical rules taken out (kept as hints), so
 * that the whitespace analysis sees the gutters a ruled table or a boxed page would otherwise bridge.
 */
import type { GrayPage } from '../decode-image.js';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The smallest box holding every one of `boxes` (at least one). */
export function unionBox(boxes: readonly Box[]): Box {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width);
    y1 = Math.max(y1, b.y + b.height);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

export interface InkMap {
  width: number;
  height: number;
  /** 1 where there is ink. */
  data: Uint8Array;
}

export interface Rule {
  orientation: 'horizontal' | 'vertical';
  box: Box;
}

export function otsuThreshold(data: Uint8Array): number {
  const hist = new Uint32Array(256);
  for (let i = 0; i < data.length; i++) hist[data[i]]++;
  const total = data.length;
  let sumAll = 0;
  for (let i = 0; i < 256; i++) sumAll += i * hist[i];
  let wB = 0;
  let sumB = 0;
  let best = 0;
  let threshold = 127;
  for (let t = 0; t < 256; t++) {
    wB += hist[t];
    if (wB === 0) continue;
    const wF = total - wB;
    if (wF === 0) break;
    sumB += t * hist[t];
    const mB = sumB / wB;
    const mF = (sumAll - sumB) / wF;
    const between = wB * wF * (mB - mF) ** 2;
    if (between > best) {
      best = between;
      threshold = t;
    }
  }
  return threshold;
}

const thresholds = new WeakMap<Uint8Array, number>();

/**
 * The page's ink threshold: Otsu's, at most 200. Orientation, skew and layout each ask for it, mostly of the same
 * pixels (an upright page without skew is one image throughout), so it is kept per image: a page image's pixels
 * are never changed in place (turning, deskewing and flattening make new ones).
 */
export function inkThreshold(page: GrayPage): number {
  let thr = thresholds.get(page.data);
  if (thr === undefined) {
    thr = Math.min(otsuThreshold(page.data), 200);
    thresholds.set(page.data, thr);
  }
  return thr;
}

export function binarize(page: GrayPage): InkMap {
  const thr = inkThreshold(page);
  const data = new Uint8Array(page.width * page.height);
  for (let i = 0; i < data.length; i++) data[i] = page.data[i] <= thr ? 1 : 0;
  return { width: page.width, height: page.height, data };
}

/**
 * Erase straight ink runs longer than `minLength` and at most `maxThickness` thick; return them as rules.
 * Text strokes are short, so only rules (table borders, underlines across a column) qualify.
 */
export function removeRules(ink: InkMap, minLength: number, maxThickness = 6): Rule[] {
  const { width: w, height: h, data } = ink;
  const rules: Rule[] = [];
  // Horizontal: runs along rows.
  const hMask = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    let start = -1;
    for (let x = 0; x <= w; x++) {
      const on = x < w && data[y * w + x] === 1;
      if (on && start < 0) start = x;
      if (!on && start >= 0) {
        if (x - start >= minLength) for (let k = start; k < x; k++) hMask[y * w + k] = 1;
        start = -1;
      }
    }
  }
  // Vertical: runs along columns, found row by row (each column's open run in `start`): the page is read in
  // memory order, not a column at a time across every row.
  const vMask = new Uint8Array(w * h);
  const start = new Int32Array(w).fill(-1);
  for (let y = 0; y <= h; y++) {
    for (let x = 0; x < w; x++) {
      const on = y < h && data[y * w + x] === 1;
      if (on && start[x] < 0) start[x] = y;
      if (!on && start[x] >= 0) {
        if (y - start[x] >= minLength) for (let k = start[x]; k < y; k++) vMask[k * w + x] = 1;
        start[x] = -1;
      }
    }
  }
  // Group masked rows (columns) into rules no thicker than maxThickness; thicker runs are solid shapes (figures).
  const group = (mask: Uint8Array, horizontal: boolean): void => {
    const outer = horizontal ? h : w;
    const inner = horizontal ? w : h;
    const at = (o: number, i: number): number => (horizontal ? o * w + i : i * w + o);
    // Which rows (columns) hold any of the mask, in one pass in memory order: most hold none.
    const has = new Uint8Array(outer);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (mask[y * w + x]) has[horizontal ? y : x] = 1;
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
        rules.push(horizontal
          ? { orientation: 'horizontal', box: { x: lo, y: o, width: hi - lo + 1, height: end - o } }
          : { orientation: 'vertical', box: { x: o, y: lo, width: end - o, height: hi - lo + 1 } });
      }
      o = end;
    }
  };
  group(hMask, true);
  group(vMask, false);
  return rules;
}
