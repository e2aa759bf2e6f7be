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

/** Per threshold, ink (1) or not (0) for two pixels at once, indexed by their two bytes as one 16-bit number. */
const pairTables = new Map<number, Uint16Array>();

function pairTable(thr: number): Uint16Array {
  let t = pairTables.get(thr);
  if (!t) {
    t = new Uint16Array(65536);
    // Either byte order: each byte's lane answers for that byte.
    for (let i = 0; i < 65536; i++) t[i] = ((i & 0xff) <= thr ? 1 : 0) | (i >>> 8 <= thr ? 0x100 : 0);
    pairTables.set(thr, t);
  }
  return t;
}

/** Ink (1) where a pixel is at most `thr`, two pixels a table lookup where the buffer allows it. */
function threshold(src: Uint8Array, thr: number): Uint8Array {
  const out = new Uint8Array(src.length);
  let i = 0;
  if ((src.byteOffset & 1) === 0) {
    const table = pairTable(thr);
    const pairs = src.length >> 1;
    lookUp(table, new Uint16Array(src.buffer, src.byteOffset, pairs), new Uint16Array(out.buffer, 0, pairs));
    i = pairs << 1;
  }
  for (; i < src.length; i++) out[i] = src[i] <= thr ? 1 : 0;
  return out;
}

/**
 * to[k] = table[from[k]]. A loop over a whole page, in a function of its own: compiled on-stack inside threshold
 * during its first call, before the lines after the loop had run, the compiled code deoptimised at the loop's end on
 * every later page.
 */
function lookUp(table: Uint16Array, from: Uint16Array, to: Uint16Array): void {
  for (let k = 0; k < from.length; k++) to[k] = table[from[k]];
}

/**
 * Each image's ink, kept while the image is: orientation reads it to choose between rows and columns, and the
 * layout then takes it over (an upright page without skew is one image throughout). Never changed while shared.
 */
const inkMaps = new WeakMap<Uint8Array, Uint8Array>();

/** The page's ink, shared: read it, do not change it (binarize gives a map to change). */
export function inkOf(page: GrayPage): InkMap {
  let data = inkMaps.get(page.data);
  if (!data) {
    data = threshold(page.data, inkThreshold(page));
    inkMaps.set(page.data, data);
  }
  return { width: page.width, height: page.height, data };
}

/**
 * The page's ink as a map of its own (the layout erases rules and pictures from it): the shared one, if there is
 * one, handed over and forgotten rather than copied (a later inkOf makes it anew), so that a page never holds two.
 */
export function binarize(page: GrayPage): InkMap {
  const shared = inkMaps.get(page.data);
  inkMaps.delete(page.data);
  return { width: page.width, height: page.height, data: shared ?? threshold(page.data, inkThreshold(page)) };
}

/** The 32-bit words of an ink map's buffer (its pixels four at a time). */
export function wordsOf(data: Uint8Array): Uint32Array {
  return new Uint32Array(data.buffer, 0, data.buffer.byteLength >> 2);
}

/** A word's four byte lanes added up. */
const lanes = (s: number): number => (s & 0xff) + ((s >>> 8) & 0xff) + ((s >>> 16) & 0xff) + (s >>> 24);

/**
 * The ink pixels (bytes of 0 or 1) in data[from, to), four at a time: a 32-bit word's bytes are four pixels, and
 * 255 words added up cannot carry one lane into the next. The layout asks for row profiles of nested regions over
 * and over, and a byte at a time they were a fifth of the layout worker's time on docling's pages.
 */
export function inkCount(data: Uint8Array, words: Uint32Array, from: number, to: number): number {
  const off = data.byteOffset;
  const head = Math.min(to, from + ((4 - ((off + from) & 3)) & 3));
  const aligned = Math.max(head, to - ((off + to) & 3));
  let n = byteSum(data, from, head);
  let acc = 0;
  let k = 0;
  for (let i = head; i < aligned; i += 4) {
    acc += words[(off + i) >> 2];
    if (++k === 255) {
      n += lanes(acc);
      acc = 0;
      k = 0;
    }
  }
  return n + lanes(acc) + byteSum(data, aligned, to);
}

/**
 * data[from, to) added up a byte at a time: a row's unaligned ends. One function for both ends, so that neither is
 * code the optimiser has never seen run: a tail loop that had not run when inkCount was compiled on-stack deopted
 * on every later call (over 800 times a run of the layout over docling's and docbank's pages).
 */
function byteSum(data: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n += data[i];
  return n;
}

/** The first index in [from, to) holding ink, or -1; past words with none four pixels at a time. */
export function firstInk(data: Uint8Array, words: Uint32Array, from: number, to: number): number {
  const off = data.byteOffset;
  let i = from;
  for (; i < to && ((off + i) & 3) !== 0; i++) if (data[i]) return i;
  while (i + 4 <= to && words[(off + i) >> 2] === 0) i += 4;
  for (; i < to; i++) if (data[i]) return i;
  return -1;
}

/** The last index in [from, to) holding ink, or -1; past words with none four pixels at a time. */
export function lastInk(data: Uint8Array, words: Uint32Array, from: number, to: number): number {
  const off = data.byteOffset;
  let i = to;
  for (; i > from && ((off + i) & 3) !== 0; i--) if (data[i - 1]) return i - 1;
  while (i - 4 >= from && words[(off + i - 4) >> 2] === 0) i -= 4;
  for (; i > from; i--) if (data[i - 1]) return i - 1;
  return -1;
}

/**
 * Whether a 32-bit word's lowest byte lane is its first byte in memory (it is on every platform Node runs on but
 * s390x).
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Column ink counts of a region (index = column within it), four columns at a time: each row's 32-bit words are
 * added lane by lane into per-word accumulators, emptied into the counts every 255 rows (before a lane can carry).
 * A row's words start at a column that depends on where the row starts in the buffer, so rows are summed apart by
 * that phase. Byte at a time, this was a twelfth of the layout worker's time on docling's pages.
 */
export function columnInk(ink: InkMap, r: Box): Int32Array {
  const { data, width } = ink;
  const counts = new Int32Array(r.width);
  if (!LITTLE_ENDIAN || r.width < 8) {
    for (let y = r.y; y < r.y + r.height; y++) {
      const base = y * width + r.x;
      for (let x = 0; x < r.width; x++) counts[x] += data[base + x];
    }
    return counts;
  }
  const words = wordsOf(data);
  const off = data.byteOffset;
  // Per phase: the column of the row's first aligned word, its words' accumulators, and the rows added since emptied.
  const phases: { head: number; n: number; acc: Uint32Array; rows: number }[] = [];
  const empty = (ph: { head: number; n: number; acc: Uint32Array; rows: number }): void => {
    for (let j = 0; j < ph.n; j++) {
      const v = ph.acc[j];
      if (v === 0) continue;
      const x = ph.head + 4 * j;
      counts[x] += v & 0xff;
      counts[x + 1] += (v >>> 8) & 0xff;
      counts[x + 2] += (v >>> 16) & 0xff;
      counts[x + 3] += v >>> 24;
    }
    ph.acc.fill(0);
    ph.rows = 0;
  };
  for (let y = r.y; y < r.y + r.height; y++) {
    const base = y * width + r.x;
    const head = (4 - ((off + base) & 3)) & 3;
    let ph = phases[head];
    if (!ph) {
      const n = (r.width - head) >> 2;
      ph = phases[head] = { head, n, acc: new Uint32Array(n), rows: 0 };
    }
    for (let x = 0; x < head; x++) counts[x] += data[base + x];
    const w0 = (off + base + head) >> 2;
    const acc = ph.acc;
    for (let j = 0; j < ph.n; j++) acc[j] += words[w0 + j];
    for (let x = head + 4 * ph.n; x < r.width; x++) counts[x] += data[base + x];
    if (++ph.rows === 255) empty(ph);
  }
  for (const ph of phases) if (ph) empty(ph);
  return counts;
}
