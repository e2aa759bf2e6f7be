/**
 * The engine on a GPU beside the same machine's CPU path, in one run: lines/s and tokens per forward for plain AR
 * and the default decoding at several batch sizes, pages/s on docbank and docling pages, and cold start to the first
 * page (`specula parse` as a fresh process, shader warm-up included). bench/gpu.sh runs it on a lent GPU machine;
 * with small inputs it runs anywhere WebGPU has an adapter (lavapipe).
 *
 *   node dist/bench/gpu.bench.js [--device webgpu] [--lines 128] [--batches 1,32,128] [--pages 20]
 *     [--eval-dir ../shared/eval] [--no-cpu] [--out bench/results/gpu.json]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { type DeviceChoice, parseDeviceChoice } from '../src/engine/bundle/device.js';
import { Engine } from '../src/engine/engine.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import { loadPageSet } from '../src/eval/page-sets.js';
import { readDocument } from '../src/worker/read-document.js';
import { benchLines, ROOT, writeReport } from './lines.js';
import { benchOptions } from './bench-args.js';

const { values } = benchOptions(import.meta.url, {
  options: {
    device: { type: 'string', default: 'webgpu' },
    lines: { type: 'string', default: '64' },
    batches: { type: 'string', default: '1,32,128' },
    pages: { type: 'string', default: '20' },
    'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval') },
    'no-cpu': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/gpu.json' },
  },
});
const device = parseDeviceChoice(values.device, '--device');
const nLines = Number(values.lines);
const batches = values.batches.split(',').map(Number);
const nPages = Number(values.pages);
const evalDir = values['eval-dir'];
const DECODINGS: Record<string, DecodingOptionsInput | undefined> = {
  ar: { drafter: 'none', verifier: 'greedy' },
  default: undefined,
};

/** A fresh `specula parse` of the sample page: process start, bundle open, warm-up and the page. */
function coldStart(on: DeviceChoice): { ms: number; ok: boolean } {
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'bin', 'specula.js'), 'parse', '--device', on, join(ROOT, 'examples', 'sample-page.png')],
    { encoding: 'utf8' },
  );
  return { ms: Math.round(performance.now() - t0), ok: r.status === 0 };
}

async function linesReport(engine: Engine): Promise<Record<string, unknown>[]> {
  const lines = await benchLines(engine, nLines, evalDir);
  const rows: Record<string, unknown>[] = [];
  for (const batch of batches) {
    engine.maxBatch = batch;
    // Batch 1 reads one line at a time: a handful of lines says as much.
    const crops = batch === 1 ? lines.crops.slice(0, Math.min(16, lines.crops.length)) : lines.crops;
    for (const [name, decoding] of Object.entries(DECODINGS)) {
      await engine.readLines(crops.slice(0, 2), { decoding }); // this shape's kernels compiled
      const t0 = performance.now();
      const r = await engine.readLines(crops, { decoding });
      const s = (performance.now() - t0) / 1000;
      rows.push({
        batch,
        decoding: name,
        lines: crops.length,
        linesPerSecond: +(crops.length / s).toFixed(2),
        tokensPerForward: +r.metrics.meanAcceptanceLength.toFixed(2),
        forwards: r.metrics.forwards,
        committedTokens: r.metrics.committedTokens,
        decodeMs: Math.round(r.metrics.decodeMs),
        visionMs: Math.round(r.metrics.visionMs),
        decodeTokensPerSecond: +(r.metrics.committedTokens / (r.metrics.decodeMs / 1000)).toFixed(1),
      });
    }
  }
  return rows;
}

async function pagesReport(
  engine: Engine,
  set: 'docbank_pages' | 'docling_pages',
): Promise<Record<string, unknown> | null> {
  let pages;
  try {
    pages = loadPageSet(evalDir, set).slice(0, nPages);
  } catch {
    return null;
  }
  if (!pages.length) return null;
  const bar = process.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: `${set} [{bar}] {value}/{total}`, stream: process.stderr },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(pages.length, 0);
  const t0 = performance.now();
  // Every page in flight at once: their lines share the decoder's batches.
  await Promise.all(
    pages.map(async (p) => {
      await readDocument(engine, readFileSync(p.file), p.file, { pages: String(p.page) });
      bar?.increment();
    }),
  );
  bar?.stop();
  const s = (performance.now() - t0) / 1000;
  return { set, pages: pages.length, seconds: +s.toFixed(2), pagesPerSecond: +(pages.length / s).toFixed(2) };
}

async function deviceReport(on: DeviceChoice): Promise<Record<string, unknown>> {
  const cold = coldStart(on);
  const t0 = performance.now();
  const engine = await Engine.open(undefined, { device: on });
  const openMs = Math.round(performance.now() - t0);
  try {
    const lines = await linesReport(engine);
    engine.maxBatch = Math.max(...batches);
    const pages = [await pagesReport(engine, 'docbank_pages'), await pagesReport(engine, 'docling_pages')].filter(
      Boolean,
    );
    return {
      device: engine.bundle.device,
      reason: engine.bundle.deviceReason,
      precision: engine.bundle.precision,
      coldStartToFirstPageMs: cold.ms,
      coldStartOk: cold.ok,
      openWithWarmUpMs: openMs,
      lines,
      pages,
    };
  } finally {
    await engine.close();
  }
}

const runs = [await deviceReport(device)];
if (!values['no-cpu'] && device !== 'cpu') runs.push(await deviceReport('cpu'));
const gpu = runs[0].lines as { batch: number; decoding: string; decodeTokensPerSecond: number }[];
const speedup = batches.map((b) => {
  const at = (d: string): number => gpu.find((r) => r.batch === b && r.decoding === d)?.decodeTokensPerSecond ?? NaN;
  return { batch: b, defaultOverArDecode: +(at('default') / at('ar')).toFixed(2) };
});
const report = {
  when: new Date().toISOString(),
  host: { cpu: cpus()[0]?.model, cores: cpus().length },
  node: process.version,
  runs,
  speedup,
};
writeReport(values.out, report);
console.log(JSON.stringify(report, null, 1));
