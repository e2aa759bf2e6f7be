/**
 * Line crops -> the vision graph's input. Mirrors training/render.py `normalise` exactly: the crop is
 * already IMAGE_HEIGHT tall (the document layer resizes it); contrast is stretched so ink is 1 and paper 0,
 * and the width is padded with 0 to a multiple of the visual stride.
 */
import { EngineError } from '../errors.js';

/** One grey (1 channel, 8-bit) line crop, already scaled to the bundle's image height. */
export interface GrayCrop {
  width: number;
  height: number;
  data: Uint8Array;
}

export interface ImageSpec {
  height: number;
  widthMultiple: number;
  maxWidth: number;
}

export interface PixelBatch {
  pixels: Float32Array; // [B, 1, H, W]
  widths: BigInt64Array; // [B] real widths in pixels
  batch: number;
  width: number; // padded W
  /** [B] each crop's line within its region (region bundles; absent: every crop is a line of its own). */
  lines?: BigInt64Array;
}

export function checkCrop(crop: GrayCrop, spec: ImageSpec): void {
  if (crop.height !== spec.height) {
    throw new EngineError('INVALID_CROP', `line crop must be ${spec.height} px tall, got ${crop.height}`);
  }
  if (crop.width < 1 || crop.width > spec.maxWidth) {
    throw new EngineError('INVALID_CROP', `line crop width must be 1..${spec.maxWidth} px, got ${crop.width}`);
  }
  if (crop.data.length !== crop.width * crop.height) {
    throw new EngineError(
      'INVALID_CROP',
      `line crop has ${crop.data.length} bytes, expected ${crop.width * crop.height} (1 channel)`,
    );
  }
}

/** The darkest and the lightest grey of a crop's pixels. */
export function grayRange(data: Uint8Array): [number, number] {
  let lo = 255;
  let hi = 0;
  for (let i = 0; i < data.length; i++) {
    const p = data[i];
    if (p < lo) lo = p;
    if (p > hi) hi = p;
  }
  return [lo, hi];
}

/**
 * Crops as the vision graph's pixels [B, 1, height, width], each row padded with paper (0) to the widest; into an
 * array of the caller's (`into`, any contents: every value is written) or a fresh one.
 */
export function packBatch(
  crops: readonly GrayCrop[],
  spec: ImageSpec,
  lines?: readonly number[],
  into?: (length: number) => Float32Array,
): PixelBatch {
  crops.forEach((c) => checkCrop(c, spec));
  const h = spec.height;
  const maxW = Math.max(...crops.map((c) => c.width));
  const width = Math.ceil(maxW / spec.widthMultiple) * spec.widthMultiple;
  const pixels = into ? into(crops.length * h * width) : new Float32Array(crops.length * h * width);
  const widths = new BigInt64Array(crops.length);
  crops.forEach((c, b) => {
    const data = c.data;
    const [lo, hi] = grayRange(data);
    const scale = 1 / Math.max(hi - lo, 32);
    const base = b * h * width;
    const w = c.width;
    for (let y = 0; y < h; y++) {
      const src = y * w;
      const dst = base + y * width;
      for (let x = 0; x < w; x++) pixels[dst + x] = (hi - data[src + x]) * scale;
      pixels.fill(0, dst + w, dst + width);
    }
    // A real width of whole visual tokens, the paper-coloured columns up to it included: training's normalise
    // pads every line so (its widths are always multiples of the stride), and the graph may then pool before it
    // masks (no pooling window straddles a row's edge).
    widths[b] = BigInt(Math.ceil(w / spec.widthMultiple) * spec.widthMultiple);
  });
  return {
    pixels,
    widths,
    batch: crops.length,
    width,
    ...(lines ? { lines: BigInt64Array.from(lines, (l) => BigInt(l)) } : {}),
  };
}
