/**
 * Engine benchmark: lines/s at batch 1 and 32 (greedy AR, the baseline), milliseconds per decoder forward,
 * and the cost of one forward carrying 8 new tokens against one carrying 1 (the room speculative decoding
 * has), with tesseract on the same lines in the same run. Writes JSON to bench/results/ and prints a table.
 *
 *   npm run bench                     # lines from ../shared/eval if present, else the sample page
 *   npm run bench -- --lines 64 --no-tesseract
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Engine } from '../src/engine/engine.js';
import { KvCache } from '../src/engine/decode/kv-cache.js';
import type { GrayCrop } from '../src/engine/vision/preprocess.js';
import { decoderStep } from '../src/engine/decode/decoder-step.js';
import { runVision } from '../src/engine/vision/visual-state.js';
import { tesseractVersion } from '../src/eval/tesseract.js';
import { benchArgs, benchLines, median, reportHeader, tesseractLinesPerSecond, writeReport } from './lines.js';

async function forwardMs(
  engine: Engine,
  crops: GrayCrop[],
  batch: number,
  newTokens: number,
  cacheLen: number,
  reps: number,
): Promise<number> {
  const { bundle } = engine;
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  const rows = Array.from({ length: batch }, (_, i) => crops[i % crops.length]);
  const vis = await runVision(bundle, { crops: rows });
  const cache = new KvCache(nLayers, nHeads, headDim, batch);
  cache.reserve(cacheLen + newTokens);
  cache.lengths.fill(cacheLen);
  const tokens = Array.from({ length: batch }, () => Array.from({ length: newTokens }, (_, i) => 40 + i));
  const positions = Array.from({ length: batch }, () => Array.from({ length: newTokens }, (_, i) => cacheLen + i));
  const times: number[] = [];
  for (let r = 0; r < reps + 2; r++) {
    const t0 = performance.now();
    await decoderStep(bundle, cache, vis, { tokens, positions });
    if (r >= 2) times.push(performance.now() - t0); // two warm-up runs
  }
  return median(times);
}

async function main(): Promise<void> {
  const args = benchArgs(import.meta.url, 'bench/results/engine.json');
  const engine = await Engine.open(args.model);
  const { source, crops, files } = await benchLines(engine, args.lines, args.evalDir);
  const rows: Record<string, unknown>[] = [];
  const print: string[][] = [];

  for (const batch of [1, 32]) {
    const t0 = performance.now();
    engine.maxBatch = batch;
    const { metrics } = await engine.readLines(crops, { decoding: { drafter: 'none', verifier: 'greedy' } });
    const s = (performance.now() - t0) / 1000;
    rows.push({
      system: 'specula greedy AR',
      batch,
      lines: crops.length,
      seconds: s,
      linesPerSecond: crops.length / s,
      forwards: metrics.forwards,
      tokens: metrics.committedTokens,
      visionMs: metrics.visionMs,
      decodeMs: metrics.decodeMs,
      msPerForward: metrics.decodeMs / metrics.forwards,
    });
    print.push([
      `specula greedy AR, batch ${batch}`,
      (crops.length / s).toFixed(2),
      (metrics.decodeMs / metrics.forwards).toFixed(2),
    ]);
  }
  const tess = args.tesseract ? await tesseractVersion() : null;
  if (tess) {
    const { seconds: s } = await tesseractLinesPerSecond(files);
    rows.push({ system: tess, batch: 1, lines: files.length, seconds: s, linesPerSecond: files.length / s });
    print.push([`${tess} (1 process, --psm 7)`, (files.length / s).toFixed(2), '-']);
  }

  const forwards: Record<string, unknown>[] = [];
  for (const batch of args.batches) {
    const one = await forwardMs(engine, crops, batch, 1, 40, 20);
    const eight = await forwardMs(engine, crops, batch, 8, 40, 20);
    forwards.push({ batch, cacheLength: 40, msOneToken: one, msEightTokens: eight, ratio: eight / one });
  }
  await engine.close();

  const report = {
    ...reportHeader(engine),
    lines: source,
    throughput: rows,
    decoderForward: forwards,
  };
  writeReport(args.out, report);
  console.log(`lines: ${source}\n`);
  console.log('| system | lines/s | ms per decoder forward |\n|---|---|---|');
  for (const p of print) console.log(`| ${p.join(' | ')} |`);
  console.log('\n| batch | forward, 1 new token (ms) | forward, 8 new tokens (ms) | 8 vs 1 |\n|---|---|---|---|');
  for (const f of forwards) {
    const r = f as { batch: number; msOneToken: number; msEightTokens: number; ratio: number };
    console.log(`| ${r.batch} | ${r.msOneToken.toFixed(2)} | ${r.msEightTokens.toFixed(2)} | ${r.ratio.toFixed(2)}x |`);
  }
  console.log(`\nwritten to ${args.out}`);
  if (files[0]?.includes('specula-bench-')) rmSync(resolve(files[0], '..'), { recursive: true, force: true });
}

await main();
