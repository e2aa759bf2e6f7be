/**
 * The API under load: N single-page jobs through real HTTP, one after another versus all at once, with plain
 * greedy decoding (our AR baseline) and with a drafter; tesseract on the same pages, one after another and as N
 * processes at once. Concurrent jobs finish sooner because their lines share decoder batches.
 *
 *   npm run bench:api -- [--jobs 8] [--files a.png,b.png] [--no-tesseract] [--out bench/results/api.json]
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { configFromEnv } from '../src/server/config.js';
import { startServer } from '../src/server/start.js';
import { tesseractRead, tesseractVersion } from '../src/eval/tesseract.js';
import { ApiClient } from '../test/helpers/api-client.js';
import { reportHeader, ROOT, writeReport } from './lines.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '8' },
    files: { type: 'string' },
    'no-tesseract': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/api.json' },
    concurrency: { type: 'string', default: '2' },
  },
});
const n = Number(values.jobs);
const files = values.files ? values.files.split(',') : [join(ROOT, 'examples', 'sample-page.png')];
const pages = Array.from({ length: n }, (_, i) => files[i % files.length]);

const CREATE = `mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }`;
const EVENTS = `subscription($id: ID!) { parseJobEvents(id: $id) { __typename ... on JobDone { metrics { forwards lines tokensPerForward } } ... on JobFailed { code message } } }`;

const server = await startServer(configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'bench:bench-key', LOG_LEVEL: 'silent', SPECULA_CONCURRENCY: values.concurrency }));
const client = new ApiClient(`http://127.0.0.1:${server.port}`, 'bench-key');
const engine = server.engine;
if (!engine) throw new Error('role "all" runs an engine');
const batchRows: number[] = [];
engine.observeForwards((o) => batchRows.push(o.rows));

async function runJob(file: string, decoding: Record<string, unknown>): Promise<{ forwards: number; lines: number }> {
  const r = await client.upload<{ createParseJob: { id: string } }>(CREATE, { input: { file: null, decoding } }, ['input', 'file'], readFileSync(file), basename(file));
  if (!r.data) throw new Error(JSON.stringify(r.errors));
  const evs = await client.sse<{ parseJobEvents: { __typename: string; metrics?: { forwards: number; lines: number }; code?: string } }>(EVENTS, { id: r.data.createParseJob.id });
  const last = evs[evs.length - 1]?.data?.parseJobEvents;
  if (last?.__typename !== 'JobDone' || !last.metrics) throw new Error(`job did not finish: ${JSON.stringify(last)}`);
  return last.metrics;
}

interface Row {
  system: string;
  decoding: string;
  mode: 'one after another' | 'all at once';
  seconds: number;
  pagesPerSecond: number;
  forwards: number | null;
  meanBatchLines: number | null;
}

async function measure(decodingName: string, decoding: Record<string, unknown>, mode: Row['mode']): Promise<Row> {
  batchRows.length = 0;
  const t0 = performance.now();
  if (mode === 'all at once') await Promise.all(pages.map((p) => runJob(p, decoding)));
  else for (const p of pages) await runJob(p, decoding);
  const seconds = (performance.now() - t0) / 1000;
  const row: Row = {
    system: 'specula API',
    decoding: decodingName,
    mode,
    seconds,
    pagesPerSecond: n / seconds,
    forwards: batchRows.length,
    meanBatchLines: batchRows.length ? batchRows.reduce((a, b) => a + b, 0) / batchRows.length : null,
  };
  process.stderr.write(`${row.decoding.padEnd(22)} ${row.mode.padEnd(18)} ${seconds.toFixed(1)} s\n`);
  return row;
}

await runJob(pages[0], { drafter: 'ctc' }); // warm-up: first-run allocations and the draft-length calibration
const rows: Row[] = [];
for (const [name, decoding] of [['none (AR baseline)', { drafter: 'none' }], ['ctc + greedy', { drafter: 'ctc', verifier: 'greedy' }]] as const) {
  rows.push(await measure(name, decoding, 'one after another'));
  rows.push(await measure(name, decoding, 'all at once'));
}
await server.close();

const tesseract = values['no-tesseract'] ? null : await tesseractVersion();
if (tesseract) {
  for (const mode of ['one after another', 'all at once'] as const) {
    const t0 = performance.now();
    if (mode === 'all at once') await Promise.all(pages.map((p) => tesseractRead(p, 3)));
    else for (const p of pages) await tesseractRead(p, 3);
    const seconds = (performance.now() - t0) / 1000;
    rows.push({ system: tesseract, decoding: 'psm 3, 1 thread per process', mode, seconds, pagesPerSecond: n / seconds, forwards: null, meanBatchLines: null });
  }
}

const speedup = (decoding: string): number | null => {
  const seq = rows.find((r) => r.decoding === decoding && r.mode === 'one after another');
  const par = rows.find((r) => r.decoding === decoding && r.mode === 'all at once');
  return seq && par ? seq.seconds / par.seconds : null;
};
const header = reportHeader(engine);
const report = {
  ...header,
  jobs: n,
  pages: [...new Set(pages.map((p) => basename(p)))],
  rows,
  concurrentSpeedup: Object.fromEntries([...new Set(rows.map((r) => r.decoding))].map((d) => [d, speedup(d)])),
};
writeReport(values.out, report);

console.log(`\n${n} single-page jobs (${report.pages.join(', ')}), ${String(header.machine)}\n`);
console.log('| system | decoding | jobs run | seconds | pages/s | decoder forwards | mean lines per forward |');
console.log('|---|---|---|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.system} | ${r.decoding} | ${r.mode} | ${r.seconds.toFixed(1)} | ${r.pagesPerSecond.toFixed(2)} | ${r.forwards ?? '–'} | ${r.meanBatchLines?.toFixed(1) ?? '–'} |`);
}
for (const [d, s] of Object.entries(report.concurrentSpeedup)) if (s) console.log(`\n${d}: all at once finishes ${s.toFixed(2)}x sooner than one after another`);
console.log(`\nwritten to ${values.out}`);
