/**
 * Plane-to-plane maps (homographies) from four point pairs, and a grey image resampled through one: what takes a
 * photographed page's quadrilateral to an upright rectangle (capture.ts), and what the evaluation's photographer
 * uses the other way round.
 */
import type { GrayPage } from './decode-image.js';

export interface Point {
  x: number;
  y: number;
}

/** Row-major 3x3, h[8] = 1. */
export type Homography = Float64Array;

/** Solve A x = b in place by Gaussian elimination with partial pivoting; null when A is singular. */
function solve(a: number[][], b: number[]): number[] | null {
  const n = b.length;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    if (Math.abs(a[p][c]) < 1e-12) return null;
    [a[c], a[p]] = [a[p], a[c]];
    [b[c], b[p]] = [b[p], b[c]];
    for (let r = c + 1; r < n; r++) {
      const f = a[r][c] / a[c][c];
      for (let k = c; k < n; k++) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r];
    for (let k = r + 1; k < n; k++) s -= a[r][k] * x[k];
    x[r] = s / a[r][r];
  }
  return x;
}

/** The homography taking each `from[i]` to `to[i]` (four pairs, no three collinear); null when degenerate. */
export function homography(from: readonly Point[], to: readonly Point[]): Homography | null {
  const a: number[][] = [];
  const b: number[] = [];
  for (let i = 0; i < 4; i++) {
    const { x, y } = from[i];
    const { x: u, y: v } = to[i];
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y]);
    b.push(u);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y]);
    b.push(v);
  }
  const h = solve(a, b);
  return h ? Float64Array.from([...h, 1]) : null;
}

export function mapPoint(h: Homography, p: Point): Point {
  const w = h[6] * p.x + h[7] * p.y + h[8];
  return { x: (h[0] * p.x + h[1] * p.y + h[2]) / w, y: (h[3] * p.x + h[4] * p.y + h[5]) / w };
}

/**
 * A `width` x `height` grey image whose pixel (x, y) is `src` sampled bilinearly at `toSource`(x, y); `fill` where
 * that falls outside `src`.
 */
export function warpGray(src: GrayPage, toSource: Homography, width: number, height: number, fill = 255): GrayPage {
  const out = new Uint8Array(width * height);
  const { width: sw, height: sh, data } = src;
  const h = toSource;
  for (let y = 0; y < height; y++) {
    let nx = h[1] * y + h[2];
    let ny = h[4] * y + h[5];
    let nw = h[7] * y + h[8];
    for (let x = 0; x < width; x++, nx += h[0], ny += h[3], nw += h[6]) {
      const sx = nx / nw;
      const sy = ny / nw;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      if (x0 < 0 || y0 < 0 || x0 >= sw - 1 || y0 >= sh - 1) {
        out[y * width + x] = fill;
        continue;
      }
      const fx = sx - x0;
      const fy = sy - y0;
      const i = y0 * sw + x0;
      const top = data[i] + (data[i + 1] - data[i]) * fx;
      const bottom = data[i + sw] + (data[i + sw + 1] - data[i + sw]) * fx;
      out[y * width + x] = Math.round(top + (bottom - top) * fy);
    }
  }
  return { width, height, data: out };
}
