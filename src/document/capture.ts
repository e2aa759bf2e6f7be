/**
 * A photographed page made to look scanned: the sheet found against what it lies on and its quadrilateral mapped
 * to an upright rectangle (perspective and rotation undone), then its light evened out (a phone's ramp, vignette and
 * tinted paper divided out by the paper's own brightness, estimated around each point). A page with no sheet edge
 * in view is left as it is, so scans and rendered pages pass through untouched.
 */
import type { GrayPage } from './decode-image.js';
import { homography, type Point, warpGray } from './homography.js';
import { otsuThreshold } from './layout/ink.js';

/** The sheet is looked for on a copy this many pixels on its longer side. */
const FIND_SIDE = 400;
/** The sheet must cover this share of the photograph, and what lies around it this share at least. */
const MIN_SHEET = 0.2;
const MIN_DESK = 0.03;
/** The desk must be this much darker than the paper (mean grey, 0-255). */
const MIN_CONTRAST = 40;
/** This share of the sheet's outline must lie on its quadrilateral's edges (within EDGE_REACH small pixels). */
const MIN_EDGE_FIT = 0.85;
const EDGE_REACH = 2.5;
/** Every corner must lie this many small pixels inside the photograph: desk seen round the whole sheet. */
const CORNER_MARGIN = 3;

interface Small {
  width: number;
  height: number;
  data: Uint8Array;
  scale: number;
}

/** A copy `FIND_SIDE` pixels on its longer side, each pixel its block's brightest (ink fills in, paper stays). */
function brightCopy(page: GrayPage, side = FIND_SIDE): Small {
  const scale = Math.max(1, Math.max(page.width, page.height) / side);
  const width = Math.max(1, Math.floor(page.width / scale));
  const height = Math.max(1, Math.floor(page.height / scale));
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor(y * scale);
    const y1 = Math.min(page.height, Math.floor((y + 1) * scale));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * scale);
      const x1 = Math.min(page.width, Math.floor((x + 1) * scale));
      let m = 0;
      for (let yy = y0; yy < y1; yy++) {
        const row = yy * page.width;
        for (let xx = x0; xx < x1; xx++) if (page.data[row + xx] > m) m = page.data[row + xx];
      }
      data[y * width + x] = m;
    }
  }
  return { width, height, data, scale };
}

/** The largest 4-connected region of `on` pixels, its holes filled, as a 0/1 mask; and its pixel count. */
function largestRegion(on: Uint8Array, width: number, height: number): { mask: Uint8Array; size: number } {
  const label = new Int32Array(on.length).fill(-1);
  const stack: number[] = [];
  let best = -1;
  let bestSize = 0;
  let next = 0;
  for (let i = 0; i < on.length; i++) {
    if (!on[i] || label[i] >= 0) continue;
    let size = 0;
    label[i] = next;
    stack.push(i);
    while (stack.length) {
      const j = stack.pop() as number;
      size++;
      const x = j % width;
      for (const k of [x > 0 ? j - 1 : -1, x < width - 1 ? j + 1 : -1, j - width, j + width]) {
        if (k >= 0 && k < on.length && on[k] && label[k] < 0) {
          label[k] = next;
          stack.push(k);
        }
      }
    }
    if (size > bestSize) [best, bestSize] = [next, size];
    next++;
  }
  // Holes: what the outside, flooded in from the border, does not reach.
  const outside = new Uint8Array(on.length);
  for (let i = 0; i < on.length; i++) {
    const x = i % width;
    const y = (i / width) | 0;
    if ((x === 0 || y === 0 || x === width - 1 || y === height - 1) && label[i] !== best) {
      outside[i] = 1;
      stack.push(i);
    }
  }
  while (stack.length) {
    const j = stack.pop() as number;
    const x = j % width;
    for (const k of [x > 0 ? j - 1 : -1, x < width - 1 ? j + 1 : -1, j - width, j + width]) {
      if (k >= 0 && k < on.length && !outside[k] && label[k] !== best) {
        outside[k] = 1;
        stack.push(k);
      }
    }
  }
  const mask = new Uint8Array(on.length);
  let size = 0;
  for (let i = 0; i < on.length; i++) if (!outside[i]) size += mask[i] = 1;
  return { mask, size };
}

function distanceToSegment(p: Point, a: Point, b: Point): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const t = Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy || 1)));
  return Math.hypot(p.x - a.x - t * dx, p.y - a.y - t * dy);
}

function quadArea(q: readonly Point[]): number {
  let s = 0;
  for (let i = 0; i < 4; i++) s += q[i].x * q[(i + 1) % 4].y - q[(i + 1) % 4].x * q[i].y;
  return Math.abs(s) / 2;
}

/**
 * The sheet's corners in the page's pixels (top-left, top-right, bottom-right, bottom-left), or null where no sheet
 * stands out from a darker surround along four straight edges (a scan, a rendered page, a crop inside the sheet).
 */
export function findSheet(page: GrayPage): Point[] | null {
  const small = brightCopy(page);
  const { width, height, data } = small;
  const thr = otsuThreshold(data);
  const on = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) on[i] = data[i] > thr ? 1 : 0;
  const { mask, size } = largestRegion(on, width, height);
  const total = width * height;
  if (size < MIN_SHEET * total || size > (1 - MIN_DESK) * total) return null;
  let paper = 0;
  let desk = 0;
  for (let i = 0; i < total; i++) mask[i] ? (paper += data[i]) : (desk += data[i]);
  if (paper / size - desk / (total - size) < MIN_CONTRAST) return null;
  // Corners: the region's extremes along the diagonals (any turn under 45 degrees keeps them apart).
  const ext = [Infinity, -Infinity, -Infinity, Infinity]; // min x+y, max x-y, max x+y, min x-y
  const corner: Point[] = Array.from({ length: 4 }, () => ({ x: 0, y: 0 }));
  const outline: Point[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (!mask[i]) continue;
      const s = x + y;
      const d = x - y;
      if (s < ext[0]) [ext[0], corner[0]] = [s, { x, y }];
      if (d > ext[1]) [ext[1], corner[1]] = [d, { x, y }];
      if (s > ext[2]) [ext[2], corner[2]] = [s, { x, y }];
      if (d < ext[3]) [ext[3], corner[3]] = [d, { x, y }];
      const edge =
        x === 0 ||
        y === 0 ||
        x === width - 1 ||
        y === height - 1 ||
        !mask[i - 1] ||
        !mask[i + 1] ||
        !mask[i - width] ||
        !mask[i + width];
      if (edge) outline.push({ x, y });
    }
  }
  if (quadArea(corner) < MIN_SHEET * total) return null;
  // A bright region cut off by the photograph's edge is part of a page (a pale half above a dark panel), not a sheet.
  if (
    corner.some(
      (c) =>
        c.x < CORNER_MARGIN || c.y < CORNER_MARGIN || c.x >= width - CORNER_MARGIN || c.y >= height - CORNER_MARGIN,
    )
  )
    return null;
  let fit = 0;
  for (const p of outline) {
    let d = Infinity;
    for (let k = 0; k < 4; k++) d = Math.min(d, distanceToSegment(p, corner[k], corner[(k + 1) % 4]));
    if (d <= EDGE_REACH) fit++;
  }
  if (fit < MIN_EDGE_FIT * outline.length) return null;
  // Block centres, in the page's pixels.
  return corner.map((c) => ({ x: (c.x + 0.5) * small.scale, y: (c.y + 0.5) * small.scale }));
}

/** The sheet within `corners` mapped to an upright rectangle the size of its mean edges. */
export function straightenSheet(page: GrayPage, corners: readonly Point[]): GrayPage {
  const len = (a: Point, b: Point): number => Math.hypot(b.x - a.x, b.y - a.y);
  const width = Math.round((len(corners[0], corners[1]) + len(corners[3], corners[2])) / 2);
  const height = Math.round((len(corners[0], corners[3]) + len(corners[1], corners[2])) / 2);
  const rect: Point[] = [
    { x: 0, y: 0 },
    { x: width, y: 0 },
    { x: width, y: height },
    { x: 0, y: height },
  ];
  const toPage = homography(rect, corners);
  return toPage ? warpGray(page, toPage, width, height) : page;
}

/** Paper this bright or brighter everywhere (the 5th percentile of the paper estimate) is evenly lit. */
const EVEN_PAPER = 225;
/** Light is estimated over blocks this share of the page's longer side (wider than a line of text is tall). */
const LIGHT_BLOCK = 1 / 80;

/**
 * The page divided by its paper's brightness around each point (the brightest pixel of each block, smoothed),
 * so that paper is white and ink keeps its contrast; null when the paper is evenly white already.
 */
export function evenLight(page: GrayPage): GrayPage | null {
  const light = smooth(brightCopy(page, Math.round(1 / LIGHT_BLOCK)));
  const sorted = Uint8Array.from(light.data).sort();
  if (sorted[Math.floor(sorted.length * 0.05)] >= EVEN_PAPER) return null;
  const out = new Uint8Array(page.width * page.height);
  const { width: lw, height: lh, data: ld } = light;
  for (let y = 0; y < page.height; y++) {
    const fy = Math.min(lh - 1, Math.max(0, (y + 0.5) / light.scale - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(lh - 1, y0 + 1);
    const ty = fy - y0;
    for (let x = 0; x < page.width; x++) {
      const fx = Math.min(lw - 1, Math.max(0, (x + 0.5) / light.scale - 0.5));
      const x0 = Math.floor(fx);
      const x1 = Math.min(lw - 1, x0 + 1);
      const tx = fx - x0;
      const top = ld[y0 * lw + x0] + (ld[y0 * lw + x1] - ld[y0 * lw + x0]) * tx;
      const bottom = ld[y1 * lw + x0] + (ld[y1 * lw + x1] - ld[y1 * lw + x0]) * tx;
      const paper = Math.max(1, top + (bottom - top) * ty);
      const i = y * page.width + x;
      out[i] = Math.min(255, Math.round((255 * page.data[i]) / paper));
    }
  }
  return { width: page.width, height: page.height, data: out };
}

/** Each block's brightest, taken over its 3x3 neighbourhood (a block of dense text keeps its paper), then averaged. */
function smooth(s: Small): Small {
  const { width, height, data } = s;
  const max = new Uint8Array(data.length);
  const avg = new Uint8Array(data.length);
  for (const [src, dst, op] of [
    [data, max, 'max'],
    [max, avg, 'mean'],
  ] as const) {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let m = 0;
        let sum = 0;
        let n = 0;
        for (let yy = Math.max(0, y - 1); yy <= Math.min(height - 1, y + 1); yy++) {
          for (let xx = Math.max(0, x - 1); xx <= Math.min(width - 1, x + 1); xx++) {
            const v = src[yy * width + xx];
            if (v > m) m = v;
            sum += v;
            n++;
          }
        }
        dst[y * width + x] = op === 'max' ? m : Math.round(sum / n);
      }
    }
  }
  return { ...s, data: avg };
}

/** A photographed page straightened and evenly lit, and whether anything was done to it. */
export function fromCapture(page: GrayPage): { page: GrayPage; sheet: Point[] | null; relit: boolean } {
  const sheet = findSheet(page);
  if (!sheet) return { page, sheet: null, relit: false };
  const straight = straightenSheet(page, sheet);
  // Only a sheet found on a desk is relit: a scan's shaded panels and gradients are flatten.ts's, which keeps them.
  const lit = evenLight(straight);
  return { page: lit ?? straight, sheet, relit: lit !== null };
}
