/**
 * Text lines of a clean one-column page, top to bottom: Otsu binarisation, a row-ink profile cut into bands,
 * over-tall bands split at their weakest row, specks and rules dropped, each band boxed tightly with padding.
 * Columns, tables and reading order across blocks belong to the full layout analysis.
 */
import type { GrayPage } from './decode-image.js';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function otsuThreshold(data: Uint8Array): number {
  const hist = new Float64Array(256);
  for (const p of data) hist[p]++;
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

interface Band {
  top: number; // inclusive
  bottom: number; // exclusive
}

function splitTall(band: Band, rows: Int32Array, typical: number): Band[] {
  const h = band.bottom - band.top;
  if (h < 1.7 * typical) return [band];
  let mean = 0;
  for (let y = band.top; y < band.bottom; y++) mean += rows[y];
  mean /= h;
  // The weakest row near a line boundary: search away from the band's ends.
  const from = band.top + Math.floor(0.6 * typical);
  const to = band.bottom - Math.floor(0.6 * typical);
  let cut = -1;
  for (let y = from; y < to; y++) if (cut < 0 || rows[y] < rows[cut]) cut = y;
  if (cut < 0 || rows[cut] > 0.35 * mean) return [band];
  return [...splitTall({ top: band.top, bottom: cut }, rows, typical), ...splitTall({ top: cut + 1, bottom: band.bottom }, rows, typical)];
}

export function findLines(page: GrayPage): Box[] {
  const { width: w, height: h, data } = page;
  const thr = Math.min(otsuThreshold(data), 200);
  const ink = new Uint8Array(w * h);
  const rows = new Int32Array(h);
  for (let y = 0; y < h; y++) {
    let n = 0;
    for (let x = 0; x < w; x++) {
      if (data[y * w + x] <= thr) {
        ink[y * w + x] = 1;
        n++;
      }
    }
    rows[y] = n;
  }
  // Rows with a couple of ink pixels are noise, not text.
  const minRow = Math.max(2, Math.round(w * 0.0015));
  let bands: Band[] = [];
  let start = -1;
  for (let y = 0; y <= h; y++) {
    const on = y < h && rows[y] >= minRow;
    if (on && start < 0) start = y;
    if (!on && start >= 0) {
      bands.push({ top: start, bottom: y });
      start = -1;
    }
  }
  // Drop specks and rules: too thin to be a line of text, or a band that is nearly all ink.
  bands = bands.filter((b) => {
    const bh = b.bottom - b.top;
    if (bh < 4) return false;
    let n = 0;
    for (let y = b.top; y < b.bottom; y++) n += rows[y];
    return n / (bh * w) < 0.6;
  });
  if (!bands.length) return [];
  const heights = bands.map((b) => b.bottom - b.top).sort((a, b) => a - b);
  const typical = heights[Math.floor(heights.length / 2)];
  bands = bands.flatMap((b) => splitTall(b, rows, typical));
  // Accents or dots cut off above a line: fold a small band into the band just below it.
  const merged: Band[] = [];
  for (let i = 0; i < bands.length; i++) {
    const b = bands[i];
    const next = bands[i + 1];
    if (next && b.bottom - b.top < 0.4 * typical && next.top - b.bottom < 0.3 * typical) {
      next.top = b.top;
      continue;
    }
    merged.push(b);
  }
  const boxes: Box[] = [];
  for (const b of merged) {
    const bh = b.bottom - b.top;
    let left = w;
    let right = -1;
    for (let y = b.top; y < b.bottom; y++) {
      for (let x = 0; x < w; x++) {
        if (ink[y * w + x]) {
          if (x < left) left = x;
          if (x > right) right = x;
        }
      }
    }
    if (right < left) continue;
    const padY = Math.round(0.15 * bh);
    const padX = Math.round(0.25 * bh);
    const x0 = Math.max(0, left - padX);
    const y0 = Math.max(0, b.top - padY);
    const x1 = Math.min(w, right + 1 + padX);
    const y1 = Math.min(h, b.bottom + padY);
    boxes.push({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
  }
  return boxes;
}
