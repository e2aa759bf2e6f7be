/**
 * A page as a phone photographs it, for measuring the page path on captures (`specula eval --suite pages
 * --photograph`): scaled to 0.75x, laid on a darker desk with a margin, turned 2-7 degrees either way, its corners
 * pulled by up to 3% of its width (perspective), lit unevenly (a ramp and a vignette taking up to 40% of the
 * light), tinted warm, blurred (sigma 0.6-1.2) and saved as JPEG at quality 55-75. Every draw is seeded by the
 * file's name and page, so a run is repeatable and the same photograph goes to us and to tesseract.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { GrayPage } from '../document/decode-image.js';
import { homography, type Point, warpGray } from '../document/homography.js';

export interface PhotoParams {
  degrees: number;
  /** Corner displacements, as fractions of the page's width: top-left, top-right, bottom-right, bottom-left. */
  pull: Point[];
  /** Direction of the light's ramp (radians) and how much light it takes at its dark end. */
  rampAngle: number;
  ramp: number;
  vignette: number;
  blur: number;
  quality: number;
}

/** mulberry32: a small seeded generator, enough to make repeatable draws. */
function seeded(key: string): () => number {
  let s = createHash('sha256').update(key).digest().readUInt32LE(0);
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function photoParams(key: string): PhotoParams {
  const r = seeded(key);
  const between = (a: number, b: number): number => a + (b - a) * r();
  const sign = r() < 0.5 ? -1 : 1;
  return {
    degrees: sign * between(2, 7),
    pull: Array.from({ length: 4 }, () => ({ x: between(-0.03, 0.03), y: between(-0.03, 0.03) })),
    rampAngle: between(0, 2 * Math.PI),
    ramp: between(0.15, 0.3),
    vignette: between(0.05, 0.1),
    blur: between(0.6, 1.2),
    quality: Math.round(between(55, 75)),
  };
}

const DESK = [92, 78, 64];
const TINT = [1, 0.96, 0.86];

/** The photograph of a grey page as JPEG bytes, drawn with `photoParams(key)`. */
export async function photograph(page: GrayPage, key: string): Promise<Uint8Array> {
  const p = photoParams(key);
  const w = Math.round(page.width * 0.75);
  const h = Math.round(page.height * 0.75);
  const margin = Math.round(0.08 * Math.max(w, h));
  const W = w + 2 * margin;
  const H = h + 2 * margin;
  const cx = W / 2;
  const cy = H / 2;
  const a = (p.degrees * Math.PI) / 180;
  // The page's corners on the desk: centred, pulled, then turned about the centre.
  const flat: Point[] = [
    { x: 0, y: 0 },
    { x: page.width, y: 0 },
    { x: page.width, y: page.height },
    { x: 0, y: page.height },
  ];
  const onDesk = flat.map((c, i) => {
    const x = margin + (c.x / page.width) * w + p.pull[i].x * w - cx;
    const y = margin + (c.y / page.height) * h + p.pull[i].y * w - cy;
    return { x: cx + x * Math.cos(a) - y * Math.sin(a), y: cy + x * Math.sin(a) + y * Math.cos(a) };
  });
  const toPage = homography(onDesk, flat);
  if (!toPage) throw new Error(`photograph: degenerate corners for ${key}`);
  const ink = warpGray(page, toPage, W, H, 0);
  const mask = warpGray(
    { width: page.width, height: page.height, data: new Uint8Array(page.width * page.height).fill(255) },
    toPage,
    W,
    H,
    0,
  );
  const rgb = new Uint8Array(W * H * 3);
  const dx = Math.cos(p.rampAngle);
  const dy = Math.sin(p.rampAngle);
  const half = Math.hypot(cx, cy);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const along = ((x - cx) * dx + (y - cy) * dy) / half; // -1 .. 1
      const radial = Math.hypot(x - cx, y - cy) / half;
      const light = 1 - (p.ramp * (along + 1)) / 2 - p.vignette * radial * radial;
      const m = mask.data[i] / 255;
      for (let c = 0; c < 3; c++) {
        const v = (ink.data[i] * TINT[c] * m + DESK[c] * (1 - m)) * light;
        rgb[i * 3 + c] = Math.max(0, Math.min(255, Math.round(v)));
      }
    }
  }
  return sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
    .blur(p.blur)
    .jpeg({ quality: p.quality })
    .toBuffer();
}
