/**
 * What a decoder forward costs on this machine at a few batch sizes and tokens per row, so `auto` draft lengths
 * weigh acceptance against real cost. Measured once, on dummy inputs (cost does not depend on them), and cached
 * per bundle and machine (cost-cache.ts).
 */
import type { Bundle } from './bundle.js';
import { readCosts, writeCosts } from './cost-cache.js';
import { CostTable, type CostPoint } from './draft-length.js';
import { KvCache } from './kv-cache.js';
import type { GrayCrop } from './preprocess.js';
import { decoderStep } from './decoder-step.js';
import { runVision } from './vision.js';

export async function measureCosts(bundle: Bundle, maxBatch: number): Promise<CostTable> {
  const cached = readCosts(bundle);
  if (cached) return new CostTable(cached);
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  const { height, maxWidth, readWidth } = bundle.config.image;
  const points: CostPoint[] = [];
  // A line as wide as the model reads whole, against a text cache of 60 tokens: a forward's cost grows with the
  // visual tokens and cache its rows attend to, and on narrow 400 px lines (what this measured before) the cost
  // of each token more per row came out at half what a page's forwards pay, so `auto` drafted too wide.
  const width = Math.min(maxWidth, readWidth ?? 960);
  const crop: GrayCrop = { width, height, data: new Uint8Array(width * height).fill(255) };
  for (const batch of [1, 8, 32].filter((b) => b <= Math.max(1, maxBatch) || b === 1)) {
    const vis = await runVision(bundle, { crops: Array.from({ length: batch }, () => crop) });
    const cache = new KvCache(nLayers, nHeads, headDim, batch);
    cache.reserve(64);
    cache.lengths.fill(60);
    for (const perRow of [1, 2, 4, 8, 16, 32]) {
      const input = {
        tokens: Array.from({ length: batch }, () => Array.from({ length: perRow }, () => 40)),
        positions: Array.from({ length: batch }, () => Array.from({ length: perRow }, (_, i) => 60 + i)),
        fetch: { hidden: false, visAttn: false },
      };
      // Two untimed runs: onnxruntime's arena grows to a new shape's size on its first runs.
      for (let w = 0; w < 2; w++) await decoderStep(bundle, cache, vis, input);
      const times: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t0 = performance.now();
        await decoderStep(bundle, cache, vis, input);
        times.push(performance.now() - t0);
      }
      points.push({ batch, perRow, ms: times.sort((a, b) => a - b)[2] });
    }
  }
  writeCosts(bundle, points);
  return new CostTable(points);
}
