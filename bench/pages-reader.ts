/**
 * One Specula process reading a list of pages, as `specula parse` reads several files: the model opened once (timed
 * apart), one untimed warm-up read of the sample page, then every page read with a few documents in flight, so one
 * page's layout overlaps another's vision pass and decoder steps. Prints one JSON object: each page's markdown and
 * seconds, the stage times, the wall time over all pages and the process's peak RSS. bench/pages.bench.ts runs it as a
 * child process per system and page set, so the peak RSS is this reading's alone. Formulas are read as `specula parse`
 * reads them (the shipped formula bundle, opened with the model and timed with its load), unless --no-formulas.
 *
 * node dist/bench/pages-reader.js --pages pages.json [--drafter none --verifier greedy] [--precision fp32]
 * [--no-formulas]
 */
// First, as in the CLI: V8's tiering flag (src/cli/tiering.ts) before the reader's modules load.
import '../src/cli/tiering.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Precision } from '../src/engine/bundle/bundle.js';
import { Engine } from '../src/engine/engine.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import { FormulaReader } from '../src/worker/formula-reader.js';
import { type DocumentReading, readDocument, type StageTimes } from '../src/worker/read-document.js';
import { ROOT } from './lines.js';
import { benchOptions } from './bench-args.js';

export interface PageJob {
  file: string;
  page: number;
  dropHeadersFooters: boolean;
}

export interface ReaderResult {
  loadSeconds: number;
  warmSeconds: number;
  wallSeconds: number;
  peakRssMb: number;
  precision: string;
  pages: { markdown: string; seconds: number; error?: string }[];
  stages: StageTimes;
  lines: number;
  forwards: number;
  tokensPerForward: number;
}

const { values } = benchOptions(import.meta.url, {
  options: {
    pages: { type: 'string' },
    drafter: { type: 'string' },
    verifier: { type: 'string' },
    precision: { type: 'string' },
    model: { type: 'string' },
    ahead: { type: 'string', default: '3' },
    'no-formulas': { type: 'boolean', default: false },
    'formula-model': { type: 'string' },
  },
});
if (!values.pages) throw new Error('--pages FILE (a JSON list of { file, page, dropHeadersFooters })');
const jobs = JSON.parse(readFileSync(values.pages, 'utf8')) as PageJob[];
const decoding: DecodingOptionsInput = {
  ...(values.drafter ? { drafter: values.drafter } : {}),
  ...(values.verifier ? { verifier: values.verifier } : {}),
};
const ahead = Math.max(1, Number(values.ahead));

const t0 = performance.now();
const engineOpts = values.precision ? { precision: values.precision as Precision } : {};
const engine = await Engine.open(values.model, engineOpts);
engine.resolve(decoding);
const formulas = values['no-formulas']
  ? null
  : values['formula-model']
    ? new FormulaReader(values['formula-model'], engineOpts)
    : FormulaReader.shipped(engineOpts);
await formulas?.engine();
const loadSeconds = (performance.now() - t0) / 1000;
// One warm-up read of the sample page (not an evaluation page), untimed: it fills onnxruntime's arenas and, on a
// machine that has none cached yet, measures the forward-cost table `auto` draft lengths use (a few seconds, once
// per machine: src/engine/decode/cost-cache.ts).
const tw = performance.now();
await readDocument(engine, readFileSync(join(ROOT, 'examples', 'sample-page.png')), 'sample-page.png', {
  decoding,
  formulas,
});
const warmSeconds = (performance.now() - tw) / 1000;

const t1 = performance.now();
const results: ReaderResult['pages'] = [];
const readings: (DocumentReading | null)[] = [];
let next = 0;
// `ahead` pages in flight at any time, as the CLI keeps documents in flight.
async function lane(): Promise<void> {
  while (next < jobs.length) {
    const i = next++;
    const j = jobs[i];
    const start = performance.now();
    try {
      const r = await readDocument(engine, readFileSync(j.file), j.file, {
        pages: String(j.page),
        decoding,
        dropHeadersFooters: j.dropHeadersFooters,
        formulas,
      });
      readings[i] = r;
      results[i] = { markdown: r.markdown, seconds: (performance.now() - start) / 1000 };
    } catch (e) {
      readings[i] = null;
      results[i] = { markdown: '', seconds: (performance.now() - start) / 1000, error: (e as Error).message };
    }
  }
}
await Promise.all(Array.from({ length: Math.min(ahead, jobs.length) }, lane));
const wallSeconds = (performance.now() - t1) / 1000;

const stages: StageTimes = { render: 0, flatten: 0, layout: 0, orient: 0, crop: 0, vision: 0, decode: 0, assemble: 0 };
let lines = 0;
let forwards = 0;
let committed = 0;
for (const r of readings) {
  if (!r) continue;
  for (const k of Object.keys(stages) as (keyof StageTimes)[]) stages[k] += r.stages[k];
  lines += r.metrics.lines;
  forwards += r.metrics.sequenceForwards;
  committed += r.metrics.committedTokens;
}
const result: ReaderResult = {
  loadSeconds,
  warmSeconds,
  wallSeconds,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
  precision: engine.bundle.precision,
  pages: results,
  stages,
  lines,
  forwards,
  tokensPerForward: forwards ? committed / forwards : 0,
};
await engine.close();
await formulas?.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
