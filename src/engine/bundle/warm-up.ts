/**
 * Lines to warm a GPU engine with: the bundle's golden vision input (real rendered lines, shipped with every bundle),
 * turned back from the graph's pixels (ink 1, paper 0) into the grey crops a request brings.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Bundle } from './bundle.js';
import type { GrayCrop } from '../vision/preprocess.js';

interface GoldenPixels {
  vision: { inputs: { pixels: { shape: number[]; data: string }; widths: number[] } };
}

export function goldenCrops(bundle: Bundle): GrayCrop[] {
  const g = JSON.parse(readFileSync(join(bundle.dir, bundle.config.golden), 'utf8')) as GoldenPixels;
  const { shape, data } = g.vision.inputs.pixels;
  const [batch, , height, width] = shape;
  const bytes = Buffer.from(data, 'base64');
  const px = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return Array.from({ length: batch }, (_, b) => {
    const w = Math.min(width, g.vision.inputs.widths[b]);
    const crop = new Uint8Array(w * height);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < w; x++)
        crop[y * w + x] = Math.round(255 * (1 - Math.min(1, Math.max(0, px[(b * height + y) * width + x]))));
    }
    return { width: w, height, data: crop };
  });
}
