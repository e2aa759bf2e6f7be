/** The evaluation set's multi-line regions as model-ready line crops (for region bundles' tests and benchmarks). */
import { readFileSync } from 'node:fs';
import { cropLine, type LineCropSpec } from '../document/crop-lines.js';
import { decodeImage } from '../document/decode-image.js';
import type { GrayCrop } from '../engine/vision/preprocess.js';
import { loadRegionSet } from './line-sets.js';

export interface RegionCrops {
  /** Each region's line crops, top to bottom. */
  crops: GrayCrop[];
  /** The same lines as image files (for tesseract). */
  files: string[];
  /** The lines' truths joined by '\n'. */
  truth: string;
}

export async function loadRegionCrops(
  evalDir: string,
  perRegion: number,
  spec: LineCropSpec,
  most = Infinity,
): Promise<RegionCrops[]> {
  return Promise.all(
    loadRegionSet(evalDir, perRegion)
      .slice(0, most)
      .map(async (r) => ({
        crops: await Promise.all(
          r.lines.map(async (l) => {
            const page = await decodeImage(readFileSync(l.image), l.image);
            return cropLine(page, { x: 0, y: 0, width: page.width, height: page.height }, spec);
          }),
        ),
        files: r.lines.map((l) => l.image),
        truth: r.lines.map((l) => l.text).join('\n'),
      })),
  );
}
