/**
 * What a decoder forward costs on this machine at a few batch sizes and tokens per row, so `auto` draft lengths
 * weigh acceptance against real cost. Measured once, on dummy inputs (cost does not depend on them), and cached
 * per bundle and machine (decode/cost-cache.ts).
 */
import type { Bundle } from '../bundle/bundle.js';
import { readCosts, writeCosts } from './cost-cache.js';
import { type CostPoint, CostTable } from '../strategies/draft-length.js';
import { KvCache } from './kv-cache.js';
import type { GrayCrop } from '../vision/preprocess.js';
import { decoderStep } from './decoder-step.js';
import { runVision } from '../vision/visual-state.js';

export async function measureCosts(bundle: Bundle, maxBatch: number): Promise<CostTable> {
  const cached = readCosts(bundle);
  if (cached) return new CostTable(cached);
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  const { height, maxWidth, readWidth } = bundle.config.image;
  // A line as wide as the model reads whole, against a text cache of 60 tokens: a forward's cost grows with the
  // visual tokens and cache its rows attend to, and on narrow 400 px lines (what this measured before) the cost
  // of each token more per row came out at half what a page's forwards pay, so `auto` drafted too wide.
  const width = Math.min(maxWidth, readWidth ?? 960);
  const crop: GrayCrop = { width, height, data: new Uint8Array(width * height).fill(255) };
  const setups: { batch: number; perRow: number; run: () => Promise<unknown>; times: number[] }[] = [];
  for (const batch of [1, 8, 32].filter((b) => b <= Math.max(1, maxBatch) || b === 1)) {
    const vis = await runVision(bundle, { crops: Array.from({ length: batch }, () => crop) });
    const cache = new KvCache(nLayers, nHeads, headDim, batch);
    cache.reserve(64);
    cache.lengths.fill(60);
    for (const perRow of PER_ROW) {
      const input = {
        tokens: Array.from({ length: batch }, () => Array.from({ length: perRow }, () => 40)),
        positions: Array.from({ length: batch }, () => Array.from({ length: perRow }, (_, i) => 60 + i)),
        fetch: { hidden: false, visAttn: false },
      };
      const run = (): Promise<unknown> => decoderStep(bundle, cache, vis, input);
      // Two untimed runs: onnxruntime's arena grows to a new shape's size on its first runs.
      for (let w = 0; w < 2; w++) await run();
      setups.push({ batch, perRow, run, times: [] });
    }
  }
  // Round after round over every shape, so a stretch of a busy or slowed machine falls on all of them alike (measured
  // one shape after another, five times each, two tables of one machine differed by up to 40% on a point and
  // came out cheaper for 8 tokens a row than for 4).
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of setups) {
      const t0 = performance.now();
      await s.run();
      s.times.push(performance.now() - t0);
    }
  }
  const points = setups.map((s) => ({ batch: s.batch, perRow: s.perRow, ms: median(s.times) }));
  const table = monotone(points);
  writeCosts(bundle, table);
  return new CostTable(table);
}

const PER_ROW = [1, 2, 4, 8, 16, 32];
const ROUNDS = 9;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/**
 * Per batch size, the closest costs that do not fall as tokens per row rise (pool-adjacent violators): a forward
 * carrying more tokens never costs less, and a table that said so would have `auto` draft to the dip.
 */
export function monotone(points: readonly CostPoint[]): CostPoint[] {
  const out: CostPoint[] = [];
  for (const batch of [...new Set(points.map((p) => p.batch))]) {
    const row = points.filter((p) => p.batch === batch).sort((a, b) => a.perRow - b.perRow);
    // Blocks of (sum, count); a block whose mean is below the previous one's merges into it.
    const blocks: { sum: number; n: number }[] = [];
    for (const p of row) {
      blocks.push({ sum: p.ms, n: 1 });
      while (
        blocks.length > 1 &&
        blocks[blocks.length - 1].sum / blocks[blocks.length - 1].n <
          blocks[blocks.length - 2].sum / blocks[blocks.length - 2].n
      ) {
        const last = blocks.pop() as { sum: number; n: number };
        blocks[blocks.length - 1].sum += last.sum;
        blocks[blocks.length - 1].n += last.n;
      }
    }
    let i = 0;
    for (const b of blocks) for (let k = 0; k < b.n; k++) out.push({ batch, perRow: row[i++].perRow, ms: b.sum / b.n });
  }
  return out;
}
