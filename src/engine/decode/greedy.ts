/**
 * Plain greedy autoregressive decoding of a batch of lines: one new token per row per forward, the text
 * cache committed each step, finished rows leaving the batch. It is the baseline every speculative
 * strategy is measured against, and the reference their text must equal.
 */
import type { Bundle } from '../bundle/bundle.js';
import { KvCache } from './kv-cache.js';
import { positionRule, withForbidden } from './positions.js';
import { decoderStep } from './decoder-step.js';
import { keepVisualRows, type VisualState } from '../vision/visual-state.js';

export interface GreedyResult {
  ids: number[][]; // per row, without BOS, ending before EOS
  forwards: number;
  decodeMs: number;
}

/** Real (unpadded) visual tokens per row: no line holds more characters than that. */
export function visualLengths(vis: VisualState): number[] {
  return Array.from({ length: vis.batch }, (_, b) => {
    let n = 0;
    for (let t = 0; t < vis.visual; t++) n += vis.mask[b * vis.visual + t];
    return n;
  });
}

/** lines: how many lines each row holds (a region bundle's gathered regions; default 1). */
export async function decodeGreedy(
  bundle: Bundle,
  visual: VisualState,
  onToken?: (row: number, id: number) => void,
  lines?: readonly number[],
): Promise<GreedyResult> {
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  const { bos, eos } = bundle.config.specialIds;
  const perFrame = bundle.config.decoding.charsPerFrame ?? 1;
  const limit = visualLengths(visual).map((n, r) =>
    Math.min(bundle.config.decoding.maxNewTokens, Math.ceil(perFrame * n) + 4 * (lines?.[r] ?? 1)),
  );
  const rule = positionRule(bundle);
  const pos = limit.map(() => 0); // per original row: the position of the token it feeds next
  const started = performance.now();
  let vis = visual;
  const cache = new KvCache(nLayers, nHeads, headDim, vis.batch);
  const ids: number[][] = Array.from({ length: vis.batch }, () => []);
  let rows = ids.map((_, i) => i); // active index -> original row
  let last = rows.map(() => bos);
  const finished = new Set<number>(); // original rows that are done but may still sit in the batch
  let forwards = 0;
  while (rows.length) {
    const out = await decoderStep(bundle, cache, vis, {
      tokens: last.map((t) => [t]),
      positions: rows.map((row) => [pos[row]]),
    });
    forwards++;
    cache.commit(
      out.newK,
      out.newV,
      1,
      rows.map(() => [0]),
    );
    last = rows.map((row, a) => {
      if (finished.has(row)) return eos;
      const logits = withForbidden(
        out.logits.subarray(a * out.t * out.vocab, (a * out.t + 1) * out.vocab),
        rule.forbidden(pos[row], lines?.[row] ?? 1),
      );
      let next = 0;
      for (let c = 1; c < out.vocab; c++) if (logits[c] > logits[next]) next = c;
      pos[row] = rule.next(pos[row], next);
      if (next === eos) {
        finished.add(row);
      } else {
        ids[row].push(next);
        onToken?.(row, next);
        if (ids[row].length >= limit[row]) finished.add(row);
      }
      return next;
    });
    const live = rows.map((row, a) => (finished.has(row) ? -1 : a)).filter((a) => a >= 0);
    // Compacting copies the caches, so wait until a quarter of the batch has finished.
    if (live.length === 0) break;
    if (rows.length - live.length >= Math.max(1, rows.length / 4)) {
      cache.keepRows(live);
      vis = keepVisualRows(vis, live, nLayers, nHeads, headDim);
      rows = live.map((a) => rows[a]);
      last = live.map((a) => last[a]);
    }
  }
  return { ids, forwards, decodeMs: performance.now() - started };
}
