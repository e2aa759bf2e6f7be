/**
 * Load on the distributed mode, on loopback: an API process and worker processes on a real Redis, N jobs
 * submitted at once (each followed over SSE until it ends). Reports how many completed (none may be lost),
 * p50/p95 latency from submission to JobDone, throughput, each process's peak RSS, and where the CPU went (the
 * machine's busy share, each process's main thread and busiest other threads: bench/cpu-use.ts); tesseract reads the
 * same pages in the same run, one process per core.
 *
 * Workers: one per two cores by default. A CPU worker keeps two cores busy by itself (its vision thread and its
 * decoder's steps overlap); docs/benchmarks.md has the runs with one and two.
 *
 *   npm run bench:load -- [--jobs 50] [--file examples/sample-page.png] [--workers N] [--threads 1] [--no-tesseract]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { tesseractRead, tesseractVersion } from '../src/eval/tesseract.js';
import { ApiClient } from '../test/helpers/api-client.js';
import { startSpecula } from '../test/helpers/processes.js';
import { cpuSnapshot, cpuUse } from './cpu-use.js';
import { ROOT, writeReport } from './lines.js';
import { benchOptions } from './bench-args.js';

const { values } = benchOptions(import.meta.url, {
  options: {
    jobs: { type: 'string', default: '50' },
    file: { type: 'string', default: join(ROOT, 'examples', 'sample-page.png') },
    workers: { type: 'string', default: String(Math.max(1, Math.floor(cpus().length / 2))) },
    threads: { type: 'string', default: '1' },
    redis: { type: 'string', default: process.env.SPECULA_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    'no-tesseract': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/load.json' },
  },
});
const n = Number(values.jobs);
const bytes = readFileSync(values.file);
const env = {
  SPECULA_REDIS_URL: values.redis,
  SPECULA_REDIS_PREFIX: `bench-${randomUUID().slice(0, 8)}`,
  SPECULA_API_KEYS: 'bench:bench-key',
  SPECULA_THREADS: values.threads,
  SPECULA_CONCURRENCY: '8',
  SPECULA_TENANT_CONCURRENCY: '100',
  SPECULA_MAX_ACTIVE_JOBS: String(n + 10),
  LOG_LEVEL: 'warn',
};

const api = await startSpecula('api', 'api', { ...env, LOG_LEVEL: 'info' });
const workerCount = Math.max(1, Math.floor(Number(values.workers)));
const workers = await Promise.all(
  Array.from({ length: workerCount }, (_, i) =>
    startSpecula(`worker-${i + 1}`, 'worker', { ...env, LOG_LEVEL: 'info' }),
  ),
);
const client = new ApiClient(`http://127.0.0.1:${api.port}`, 'bench-key');
const CREATE = `mutation($b: String!, $n: String) { createParseJob(input: { base64: $b, fileName: $n }) { id } }`;
const EVENTS =
  `subscription($id: ID!) { parseJobEvents(id: $id) { __typename ... on ` +
  `JobDone { metrics { forwards lines } } ... on JobFailed { code ` +
  `message } } }`;

interface Outcome {
  ok: boolean;
  ms: number;
  error?: string;
}

async function one(i: number): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const r = await client.query<{ createParseJob: { id: string } }>(CREATE, {
      b: bytes.toString('base64'),
      n: `load-${i}-${basename(values.file)}`,
    });
    if (!r.data) return { ok: false, ms: performance.now() - t0, error: JSON.stringify(r.errors) };
    const evs = await client.sse<{ parseJobEvents: { __typename: string; code?: string } }>(EVENTS, {
      id: r.data.createParseJob.id,
    });
    const last = evs[evs.length - 1]?.data?.parseJobEvents;
    return {
      ok: last?.__typename === 'JobDone',
      ms: performance.now() - t0,
      ...(last?.__typename === 'JobDone' ? {} : { error: JSON.stringify(last) }),
    };
  } catch (e) {
    return { ok: false, ms: performance.now() - t0, error: (e as Error).message };
  }
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};

// Where the CPU goes while the jobs run: the machine's busy share, each process's threads (a worker's main thread
// runs the decoder's forwards, its busiest other thread is usually the vision worker's).
const pids: Record<string, number> = Object.fromEntries([
  ['api', api.p.proc.pid ?? 0],
  ...workers.map((w, i) => [`worker-${i + 1}`, w.p.proc.pid ?? 0]),
]);
const cpuBefore = cpuSnapshot(Object.values(pids));
let done = 0;
const t0 = performance.now();
const outcomes = await Promise.all(
  Array.from({ length: n }, (_, i) =>
    one(i).then((o) => {
      done++;
      process.stderr.write(`\r${done}/${n} jobs finished`);
      return o;
    }),
  ),
);
const seconds = (performance.now() - t0) / 1000;
const cpu = cpuUse(cpuBefore, cpuSnapshot(Object.values(pids)), pids);
process.stderr.write('\n');
// Each process's peak RSS over the run (Linux's VmHWM), read before they stop.
const peakMb = (pid: number | undefined): number | null => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
};
const peakRssMb = { api: peakMb(api.p.proc.pid), workers: workers.map((w) => peakMb(w.p.proc.pid)) };
// A worker logs a job's end after publishing it, so the client can hear of the last job before its log line is
// read: wait (briefly) for every succeeded job's line before stopping them, or the count comes out one short.
const succeeded = (): number[] =>
  workers.map((w) => w.p.logs.filter((l) => l.msg === 'job finished' && l.status === 'succeeded').length);
const completedJobs = outcomes.filter((o) => o.ok).length;
const deadline = Date.now() + 5000;
while (succeeded().reduce((a, b) => a + b, 0) < completedJobs && Date.now() < deadline)
  await new Promise((r) => setTimeout(r, 50));
for (const p of [api.p, ...workers.map((w) => w.p)]) p.kill('SIGTERM');
const perWorker = succeeded();
await Promise.all([api.p, ...workers.map((w) => w.p)].map((p) => p.exited));

const lat = outcomes.filter((o) => o.ok).map((o) => o.ms / 1000);
const rows: Record<string, unknown>[] = [
  {
    system: `specula (api + ${workerCount} worker${workerCount > 1 ? 's' : ''}, Redis)`,
    decoding: 'the default: ctc + joint, auto',
    peakRssMb,
    jobs: n,
    completed: lat.length,
    lost: n - lat.length,
    seconds,
    jobsPerSecond: lat.length / seconds,
    p50: quantile(lat, 0.5),
    p95: quantile(lat, 0.95),
    jobsPerWorker: perWorker,
    cpu,
  },
];

const tesseract = values['no-tesseract'] ? null : await tesseractVersion();
if (tesseract) {
  const dir = mkdtempSync(join(tmpdir(), 'specula-load-'));
  const file = join(dir, basename(values.file));
  writeFileSync(file, bytes);
  const tl: number[] = [];
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: cpus().length }, async () => {
      while (next < n) {
        next++;
        await tesseractRead(file, 3);
        tl.push((performance.now() - start) / 1000); // latency counted from "all submitted at once", as above
      }
    }),
  );
  const ts = (performance.now() - start) / 1000;
  rows.push({
    system: `${tesseract} (${cpus().length} processes)`,
    decoding: 'psm 3',
    jobs: n,
    completed: tl.length,
    lost: 0,
    seconds: ts,
    jobsPerSecond: n / ts,
    p50: quantile(tl, 0.5),
    p95: quantile(tl, 0.95),
    jobsPerWorker: null,
  });
}

const report = {
  created: new Date().toISOString(),
  machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, loopback, Redis ${values.redis}`,
  input: basename(values.file),
  threadsPerWorker: Number(values.threads),
  rows,
  failures: outcomes.filter((o) => !o.ok).map((o) => o.error),
};
writeReport(values.out, report);
console.log(`\n${n} jobs submitted at once (${report.input}), ${report.machine}\n`);
console.log('| system | decoding | completed | lost | seconds | jobs/s | p50 s | p95 s |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const f = (x: unknown): string => (typeof x === 'number' ? x.toFixed(2) : String(x));
  console.log(
    `| ${r.system} | ${r.decoding} | ${r.completed}/${r.jobs} | ${r.lost} ` +
      `| ${f(r.seconds)} | ${f(r.jobsPerSecond)} | ${f(r.p50)} | ${f(r.p95)} ` +
      `|`,
  );
}
console.log(
  `\njobs per worker: ${perWorker.join(', ')}; peak RSS MB: api ` +
    `${peakRssMb.api?.toFixed(0) ?? '?'}, workers ` +
    `${peakRssMb.workers.map((x) => x?.toFixed(0) ?? '?').join(', ')}; ` +
    `written to ${values.out}`,
);
const cpuLine = Object.entries(cpu.processes)
  .map(([name, p]) =>
    p
      ? `${name} ${p.seconds.toFixed(1)} s (main thread ${p.mainThread.toFixed(1)}, ` +
        `others ${p.otherThreads.map((t) => t.toFixed(1)).join(', ')})`
      : `${name} ?`,
  )
  .join('; ');
const busy = cpu.machineBusy === null ? '?' : `${(cpu.machineBusy * 100).toFixed(0)}%`;
console.log(`CPU over the run: machine ${busy} busy; ${cpuLine}`);
