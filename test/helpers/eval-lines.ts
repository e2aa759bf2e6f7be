/** Real line crops for tests: the evaluation set's line sets when present (CI has them), else the sample page. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cropLines } from '../../src/document/crop-lines.js';
import { decodeImage } from '../../src/document/decode-image.js';
import { findLines } from '../../src/document/layout/lines.js';
import { cropLineImage } from '../../src/document/line-image.js';
import type { Engine } from '../../src/engine/engine.js';
import type { GrayCrop } from '../../src/engine/vision/preprocess.js';
import { loadLineSet } from '../../src/eval/line-sets.js';
import { loadRegionCrops } from '../../src/eval/region-crops.js';
import { ROOT, SAMPLE_PAGE, SAMPLE_TEXT } from './fixtures.js';

export const EVAL_DIR = process.env.SPECULA_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval');

export interface TestLine {
  set: string;
  crop: GrayCrop;
  truth: string;
}

/**
 * What one vision pass takes: tests that hold the engine to the model run directly (the reference greedy loop, a
 * vision pass of their own) need crops the model reads whole, as wide lines were before the engine read them in
 * pieces (engine/vision/wide-crops.ts, held to the same properties in wide-lines.test.ts).
 */
export function modelSpec(engine: Engine): Engine['imageSpec'] {
  return { ...engine.imageSpec, maxWidth: engine.bundle.config.image.maxWidth };
}

/** Up to `perSet` lines from each line set (spread evenly through it), as model-ready crops (one vision pass each). */
export async function realLines(engine: Engine, perSet: number): Promise<TestLine[]> {
  if (!existsSync(EVAL_DIR)) {
    const page = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
    const crops = await cropLines(page, findLines(page), modelSpec(engine));
    const truth = readFileSync(SAMPLE_TEXT, 'utf8').trim().split('\n');
    return crops.map((crop, i) => ({ set: 'sample-page', crop, truth: truth[i] ?? '' }));
  }
  const out: TestLine[] = [];
  for (const set of ['docbank_lines', 'ocropy_uw3_500', 'tesseract_lstmf_lines']) {
    const all = loadLineSet(EVAL_DIR, set);
    const step = Math.max(1, all.length / perSet);
    for (let i = 0; i < Math.min(perSet, all.length); i++) {
      const l = all[Math.floor(i * step)];
      out.push({
        set,
        truth: l.text,
        crop: await cropLineImage(await decodeImage(readFileSync(l.image), l.image), modelSpec(engine)),
      });
    }
  }
  return out;
}

export interface TestRegion {
  crops: GrayCrop[];
  /** Its lines' truths joined by '\n'. */
  truth: string;
}

/**
 * Multi-line regions of real lines: runs of `perRegion` consecutive DocBank lines of a page (the evaluation set),
 * else runs of the sample page's lines.
 */
export async function realRegions(
  engine: Engine,
  perRegion: number,
  most: number,
): Promise<{ source: string; regions: TestRegion[] }> {
  if (!existsSync(EVAL_DIR)) {
    const lines = await realLines(engine, 0);
    const regions: TestRegion[] = [];
    for (let i = 0; i + perRegion <= lines.length && regions.length < most; i += perRegion) {
      const run = lines.slice(i, i + perRegion);
      regions.push({ crops: run.map((l) => l.crop), truth: run.map((l) => l.truth).join('\n') });
    }
    return { source: 'sample-page', regions };
  }
  const regions = (await loadRegionCrops(EVAL_DIR, perRegion, modelSpec(engine), most)).map(({ crops, truth }) => ({
    crops,
    truth,
  }));
  return { source: 'docbank_lines', regions };
}
