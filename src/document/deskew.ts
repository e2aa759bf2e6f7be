/**
 * Small skew (a page scanned a little crooked) estimated from the ink: the angle at which the rows of ink are
 * sharpest (the largest variance of the projected row profile), searched within a few degrees, then undone.
 */
import { loadSharp } from './sharp.js';
import type { GrayPage } from './decode-image.js';
import { inkThreshold } from './layout/ink.js';

const MAX_DEGREES = 5;
const STEP = 0.1;

export function estimateSkew(page: GrayPage): number {
  const thr = inkThreshold(page);
  // A sample of ink pixels is enough: up to ~60k points, kept column by column (a column's points share their
  // shift at every angle, so each angle rounds once per column rather than once per point).
  const { width, height, data } = page;
  const total = width * height;
  const stride = Math.max(1, Math.floor(total / 600_000));
  const perColumn = new Int32Array(width + 1);
  let points = 0;
  for (let i = 0; i < total; i += stride) {
    if (data[i] <= thr) {
      perColumn[(i % width) + 1]++;
      points++;
    }
  }
  if (points < 200) return 0;
  for (let x = 0; x < width; x++) perColumn[x + 1] += perColumn[x];
  const ys = new Int32Array(points);
  const fill = perColumn.slice(0, width);
  for (let i = 0; i < total; i += stride) {
    if (data[i] <= thr) ys[fill[i % width]++] = (i / width) | 0;
  }
  const reach = Math.ceil(width * Math.tan((MAX_DEGREES * Math.PI) / 180)) + 2;
  const bins = new Float64Array(height + 2 * reach);
  const score = (deg: number): number => sharpness(bins, ys, perColumn, width, reach, Math.tan((deg * Math.PI) / 180));
  let best = 0;
  let bestScore = score(0);
  for (let d = -MAX_DEGREES; d <= MAX_DEGREES + 1e-9; d += STEP) {
    const sc = score(d);
    if (sc > bestScore * 1.0001) {
      best = d;
      bestScore = sc;
    }
  }
  return Math.round(best * 10) / 10;
}

/**
 * How sharp the rows of ink are when the points are projected at slope t: the sum of squares of the row profile.
 * Functions of their own, a loop each, rather than a closure over estimateSkew's arrays: the closure, compiled
 * on-stack in its first call before its last loop had run, deoptimised at that loop on every later call (a hundred
 * a page).
 */
function sharpness(
  bins: Float64Array,
  ys: Int32Array,
  perColumn: Int32Array,
  width: number,
  reach: number,
  t: number,
): number {
  bins.fill(0);
  project(bins, ys, perColumn, width, reach, t);
  return sumOfSquares(bins);
}

function project(
  bins: Float64Array,
  ys: Int32Array,
  perColumn: Int32Array,
  width: number,
  reach: number,
  t: number,
): void {
  for (let x = 0; x < width; x++) {
    const from = perColumn[x];
    const to = perColumn[x + 1];
    if (from === to) continue;
    // round(y - x t) = y + round(-x t) for whole y.
    const shift = Math.round(-x * t) + reach;
    for (let k = from; k < to; k++) bins[ys[k] + shift]++;
  }
}

function sumOfSquares(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * a[i];
  return s;
}

/** The page turned back by its estimated skew (unchanged under 0.2 degrees). */
export async function deskew(page: GrayPage): Promise<{ page: GrayPage; degrees: number }> {
  const degrees = estimateSkew(page);
  if (Math.abs(degrees) < 0.2) return { page, degrees: 0 };
  return { page: await straighten(page, degrees), degrees };
}

/** The page turned back by `degrees` about its centre, the same size (page-geometry.ts undoes exactly this). */
export async function straighten(page: GrayPage, degrees: number): Promise<GrayPage> {
  const sharp = await loadSharp();
  const { data, info } = await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
    .rotate(-degrees, { background: '#ffffff' })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  // Rotation grows the canvas; keep the page-sized middle of it.
  const left = Math.floor((info.width - page.width) / 2);
  const top = Math.floor((info.height - page.height) / 2);
  const out = new Uint8Array(page.width * page.height);
  for (let y = 0; y < page.height; y++) {
    const src = (y + top) * info.width * info.channels;
    for (let x = 0; x < page.width; x++) out[y * page.width + x] = data[src + (x + left) * info.channels];
  }
  return { width: page.width, height: page.height, data: out };
}
