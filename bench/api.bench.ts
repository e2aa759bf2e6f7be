/**
 * The API under load: N single-page jobs through real HTTP, one after another versus all at once, with plain
 * greedy decoding (our AR baseline) and with a drafter; tesseract on the same pages, one after another and as N
 * processes at once; each under one or more onnxruntime thread settings (SPECULA_THREADS). Concurrent jobs
 * finish sooner because one job's page layout, vision pass (in its worker thread) and decoding overlap
 * another's, and their lines share decoder batches.
 *
 *   npm run bench:api -- [--jobs 8] [--files a.png,b.png] [--threads 0,1] [--concurrency N] [--no-tesseract]
 *                        [--out bench/results/api.json]
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { configFromEnv } from '../src/server/config.js';
import { startServer } from '../src/server/start.js';
import { tesseractRead, tesseractVersion } from '../src/eval/tesseract.js';
import { ApiClient } from '../test/helpers/api-client.js';
import { reportHeader, ROOT, writeReport } from './lines.js';
import { benchOptions } from './bench-args.js';

const { values } = benchOptions(import.meta.url, {
  options: {
    jobs: { type: 'string', default: '8' },
    files: { type: 'string' },
    'no-tesseract': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/api.json' },
    /** SPECULA_THREADS values to measure (0: one per core, the default). */
    threads: { type: 'string', default: '0,1' },
    /** Jobs a worker runs at once (default: the server's). */
    concurrency: { type: 'string' },
  },
});
const threadSettings = values.threads.split(',').map(Number);
const n = Number(values.jobs);
const files = values.files ? values.files.split(',') : [join(ROOT, 'examples', 'sample-page.png')];
const pages = Array.from({ length: n }, (_, i) => files[i % files.length]);

const CREATE = `mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }`;
const EVENTS =
  `subscription($id: ID!) { parseJobEvents(id: $id) { __typename ... on ` +
  `JobDone { metrics { forwards lines tokensPerForward } } ... on ` +
  `JobFailed { code message } } }`;

let client: ApiClient;
const batchRows: number[] = [];

async function runJob(file: string, decoding: Record<string, unknown>): Promise<{ forwards: number; lines: number }> {
  const r = await client.upload<{ createParseJob: { id: string } }>(
    CREATE,
    { input: { file: null, decoding } },
    ['input', 'file'],
    readFileSync(file),
    basename(file),
  );
  if (!r.data) throw new Error(JSON.stringify(r.errors));
  const evs = await client.sse<{
    parseJobEvents: { __typename: string; metrics?: { forwards: number; lines: number }; code?: string };
  }>(EVENTS, { id: r.data.createParseJob.id });
  const last = evs[evs.length - 1]?.data?.parseJobEvents;
  if (last?.__typename !== 'JobDone' || !last.metrics) throw new Error(`job did not finish: ${JSON.stringify(last)}`);
  return last.metrics;
}

interface Row {
  system: string;
  /** onnxruntime intra-op threads per session (null: tesseract's row). */
  threads: number | null;
  decoding: string;
  mode: 'one after another' | 'all at once';
  seconds: number;
  pagesPerSecond: number;
  forwards: number | null;
  meanBatchLines: number | null;
  /** The server's event loop while the jobs ran: its longest stall and 99th percentile delay (ms). */
  eventLoopMaxMs: number | null;
  eventLoopP99Ms: number | null;
}

async function measure(
  threads: number,
  decodingName: string,
  decoding: Record<string, unknown>,
  mode: Row['mode'],
): Promise<Row> {
  batchRows.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const t0 = performance.now();
  if (mode === 'all at once') await Promise.all(pages.map((p) => runJob(p, decoding)));
  else for (const p of pages) await runJob(p, decoding);
  const seconds = (performance.now() - t0) / 1000;
  loop.disable();
  const row: Row = {
    system: 'specula API',
    threads,
    decoding: decodingName,
    mode,
    seconds,
    pagesPerSecond: n / seconds,
    forwards: batchRows.length,
    meanBatchLines: batchRows.length ? batchRows.reduce((a, b) => a + b, 0) / batchRows.length : null,
    eventLoopMaxMs: loop.max / 1e6,
    eventLoopP99Ms: loop.percentile(99) / 1e6,
  };
  process.stderr.write(
    `threads ${threads} ${row.decoding.padEnd(22)} ${row.mode.padEnd(18)} ${seconds.toFixed(1)} s\n`,
  );
  return row;
}

const rows: Row[] = [];
let header: Record<string, unknown> = {};
for (const setting of threadSettings) {
  const server = await startServer(
    configFromEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      SPECULA_API_KEYS: 'bench:bench-key',
      LOG_LEVEL: 'silent',
      SPECULA_THREADS: String(setting),
      ...(values.concurrency ? { SPECULA_CONCURRENCY: values.concurrency } : {}),
    }),
  );
  client = new ApiClient(`http://127.0.0.1:${server.port}`, 'bench-key');
  const engine = server.engine;
  if (!engine) throw new Error('role "all" runs an engine');
  engine.observeForwards((o) => batchRows.push(o.rows));
  const threads = engine.bundle.threads;
  header = reportHeader(engine);
  await runJob(pages[0], { drafter: 'CTC' }); // warm-up: first-run allocations and the draft-length calibration
  for (const [name, decoding] of [
    ['none (AR baseline)', { drafter: 'NONE', verifier: 'GREEDY' }],
    ['ctc + greedy', { drafter: 'CTC', verifier: 'GREEDY' }],
    ['ctc + joint (default)', { drafter: 'CTC', verifier: 'JOINT' }],
  ] as const) {
    rows.push(await measure(threads, name, decoding, 'one after another'));
    rows.push(await measure(threads, name, decoding, 'all at once'));
  }
  await server.close();
}

const tesseract = values['no-tesseract'] ? null : await tesseractVersion();
if (tesseract) {
  for (const mode of ['one after another', 'all at once'] as const) {
    const t0 = performance.now();
    if (mode === 'all at once') await Promise.all(pages.map((p) => tesseractRead(p, 3)));
    else for (const p of pages) await tesseractRead(p, 3);
    const seconds = (performance.now() - t0) / 1000;
    rows.push({
      system: tesseract,
      threads: null,
      decoding: 'psm 3, 1 thread per process',
      mode,
      seconds,
      pagesPerSecond: n / seconds,
      forwards: null,
      meanBatchLines: null,
      eventLoopMaxMs: null,
      eventLoopP99Ms: null,
    });
  }
}

const speedup = (decoding: string, threads: number | null): number | null => {
  const seq = rows.find((r) => r.decoding === decoding && r.threads === threads && r.mode === 'one after another');
  const par = rows.find((r) => r.decoding === decoding && r.threads === threads && r.mode === 'all at once');
  return seq && par ? seq.seconds / par.seconds : null;
};
const setups = [...new Map(rows.map((r) => [`${r.decoding}|${r.threads ?? ''}`, r])).values()];
const report = {
  ...header,
  jobs: n,
  pages: [...new Set(pages.map((p) => basename(p)))],
  rows,
  /** One after another / all at once, per decoding and thread setting. */
  concurrentSpeedup: setups.map((r) => ({
    decoding: r.decoding,
    threads: r.threads,
    speedup: speedup(r.decoding, r.threads),
  })),
};
writeReport(values.out, report);

console.log(`\n${n} single-page jobs (${report.pages.join(', ')}), ${String(header.machine)}\n`);
console.log(
  '| system | threads | decoding | jobs run | seconds | pages/s | ' +
    'decoder forwards | mean lines per forward | event loop p99 / max ms |',
);
console.log('|---|---:|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const loop =
    r.eventLoopMaxMs === null || r.eventLoopP99Ms === null
      ? '–'
      : `${r.eventLoopP99Ms.toFixed(0)} / ${r.eventLoopMaxMs.toFixed(0)}`;
  console.log(
    `| ${r.system} | ${r.threads ?? '–'} | ${r.decoding} | ${r.mode} | ` +
      `${r.seconds.toFixed(1)} | ${r.pagesPerSecond.toFixed(2)} | ` +
      `${r.forwards ?? '–'} | ${r.meanBatchLines?.toFixed(1) ?? '–'} | ` +
      `${loop} |`,
  );
}
console.log('');
for (const c of report.concurrentSpeedup) {
  if (c.speedup)
    console.log(
      `${c.decoding}${c.threads === null ? '' : `, ${c.threads} thread(s)`}: ` +
        `all at once finishes ${c.speedup.toFixed(2)}x sooner than one after ` +
        `another`,
    );
}
console.log(`\nwritten to ${values.out}`);
