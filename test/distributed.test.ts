/**
 * The distributed mode with real processes and a real Redis: one API process (no model), two worker processes.
 * Tokens decoded on a worker reach a subscriber on the API; a worker killed mid-job loses nothing, and one stopped
 * mid-job (a deploy) hands it back rather than cancelling it; jobs queued while Redis restarts all complete.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { Engine } from '../src/engine/engine.js';
import { readDocument } from '../src/worker/read-document.js';
import { ApiClient, type GqlResult } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';
import { RedisServer, type SpeculaProcess, startSpecula } from './helpers/processes.js';

type Started = Awaited<ReturnType<typeof startSpecula>>;

import { assertRedisReachable, TEST_REDIS as REDIS } from './helpers/redis.js';
const EVENTS = `subscription($id: ID!) { parseJobEvents(id: $id) {
  __typename ... on JobEvent { seq } ... on TokenDelta { page line text }
  ... on JobRestarted { attempt } ... on JobFailed { code message }
} }`;
const JOB =
  `query($id: ID!) { parseJob(id: $id) { status markdown error { code } ` +
  `pages { index blocks { lines { text } } } } }`;

interface Event {
  __typename: string;
  seq: number;
  page?: number;
  line?: number;
  text?: string;
  code?: string;
}
interface Job {
  status: string;
  markdown: string | null;
  error: { code: string } | null;
  pages: { index: number; blocks: { lines: { text: string }[] }[] }[];
}

const sample = readFileSync(SAMPLE_PAGE);

async function stripOf(bytes: Buffer, part: number): Promise<Buffer> {
  const meta = await sharp(bytes).metadata();
  const h = Math.round((meta.height as number) * 0.2);
  return sharp(bytes)
    .extract({ left: 0, top: part * h, width: meta.width as number, height: h })
    .png()
    .toBuffer();
}

async function create(client: ApiClient, bytes: Uint8Array, name: string): Promise<string> {
  const r = await client.query<{ createParseJob: { id: string } }>(
    `mutation($b: String!, $n: String) { createParseJob(input: { base64: $b, fileName: $n }) { id } }`,
    { b: Buffer.from(bytes).toString('base64'), n: name },
  );
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  return (r.data as { createParseJob: { id: string } }).createParseJob.id;
}

/** The job as the API has it; while its Redis is away the API answers STORE_UNAVAILABLE, shown as UNKNOWN. */
async function job(client: ApiClient, id: string): Promise<Job> {
  return (await client.query<{ parseJob: Job }>(JOB, { id })).data?.parseJob ?? ({ status: 'UNKNOWN' } as Job);
}

describe('the distributed mode: an API process, worker processes, Redis', () => {
  before(() => assertRedisReachable(REDIS));
  const procs: SpeculaProcess[] = [];
  after(() => {
    for (const p of procs) p.kill('SIGKILL');
  });

  /** An API process and two workers on a fresh key prefix. */
  async function cluster(
    name: string,
    settings: Record<string, string>,
  ): Promise<{ api: { port: number }; client: ApiClient; w1: Started; w2: Started }> {
    const env = {
      SPECULA_REDIS_URL: REDIS,
      SPECULA_REDIS_PREFIX: `test-${randomUUID().slice(0, 8)}`,
      SPECULA_API_KEYS: 'acme:k-acme',
      SPECULA_CONCURRENCY: '1',
      ...settings,
    };
    const api = await startSpecula(`api${name}`, 'api', env);
    const w1 = await startSpecula(`worker${name}-1`, 'worker', env);
    const w2 = await startSpecula(`worker${name}-2`, 'worker', env);
    procs.push(api.p, w1.p, w2.p);
    return { api, client: new ApiClient(`http://127.0.0.1:${api.port}`, 'k-acme'), w1, w2 };
  }

  /** A two-page job followed over SSE from the start; resolves once tokens flow, with the worker holding it. */
  async function runningJob(
    client: ApiClient,
    workers: Started[],
  ): Promise<{
    id: string;
    pdf: Uint8Array;
    stream: Promise<GqlResult<{ parseJobEvents: Event }>[]>;
    holder: Started;
  }> {
    const pdf = pdfOfImages([sample, sample]);
    const id = await create(client, pdf, 'two-pages.pdf');
    const seen: Event[] = [];
    const stream = client.sse<{ parseJobEvents: Event }>(EVENTS, { id }, (p) =>
      seen.push(p.data?.parseJobEvents as Event),
    );
    while (!seen.some((e) => e.__typename === 'TokenDelta')) await new Promise((r) => setTimeout(r, 50));
    const holder = workers.find((w) => w.p.logs.some((l) => l.msg === 'job started' && l.jobId === id));
    assert.ok(holder, 'one of the workers logged taking the job');
    return { id, pdf, stream, holder };
  }

  it(
    'a worker killed mid-job: another takes it over and the subscriber on ' + 'the API gets the whole result',
    async (t) => {
      const { api, client, w1, w2 } = await cluster('', { SPECULA_LOCK_MS: '3000' });

      // The API process has no engine: its metrics have no engine gauges, and the engine query sums the workers.
      const metrics = await (await fetch(`http://127.0.0.1:${api.port}/metrics`)).text();
      assert.ok(!metrics.includes('specula_engine_lines'), 'the API process runs no engine');
      for (let i = 0; i < 50; i++) {
        const r = await client.query<{ engine: { stats: { workers: number } } }>('{ engine { stats { workers } } }');
        if (r.data?.engine.stats.workers === 2) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      assert.equal(
        (await client.query<{ engine: { stats: { workers: number } } }>('{ engine { stats { workers } } }')).data
          ?.engine.stats.workers,
        2,
      );

      const { id, pdf, stream, holder } = await runningJob(client, [w1, w2]);
      // Whichever worker took the job dies without a chance to clean up.
      holder.p.kill('SIGKILL');
      const killedAt = Date.now();
      const other = holder === w1 ? w2 : w1;
      void other.p
        .waitFor((l) => l.msg === 'job started' && l.jobId === id, 60_000, 'the takeover')
        .then(
          () => t.diagnostic(`taken over ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill (lock 3 s)`),
          () => undefined,
        );

      const events = (await stream).map((p: GqlResult<{ parseJobEvents: Event }>) => p.data?.parseJobEvents as Event);
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
        'numbered with no gap, across workers',
      );
      const restart = events.findIndex((e) => e.__typename === 'JobRestarted');
      assert.ok(restart > 0, 'the subscriber is told the job started again');
      assert.equal((events[restart] as { attempt?: number }).attempt, 2, 'the second start of the job');
      assert.equal(events[events.length - 1].__typename, 'JobDone');
      // The worker publishes JobDone before it logs the job's end, and its log reaches us through a pipe: wait for it.
      await other.p.waitFor(
        (l) => l.msg === 'job finished' && l.jobId === id && l.status === 'succeeded',
        20_000,
        'log of the surviving worker finishing the job',
      );

      const done = await job(client, id);
      assert.equal(done.status, 'SUCCEEDED');
      const engine = await Engine.open();
      try {
        const direct = await readDocument(engine, pdf, 'two-pages.pdf');
        assert.equal(done.markdown, direct.markdown, 'the whole result, as one process would read it');
      } finally {
        await engine.close();
      }
      // After the restart, the token stream spells every line of both pages.
      const lines = new Map<string, string>();
      for (const e of events.slice(restart))
        if (e.__typename === 'TokenDelta')
          lines.set(`${e.page}:${e.line}`, (lines.get(`${e.page}:${e.line}`) ?? '') + e.text);
      for (const page of done.pages) {
        const want = page.blocks.flatMap((b) => b.lines.map((l) => l.text));
        assert.deepEqual(
          want.map((_, i) => lines.get(`${page.index}:${i}`) ?? ''),
          want,
          `page ${page.index}`,
        );
      }
    },
  );

  it(
    'a worker stopped mid-job (SIGTERM, no grace left): it exits cleanly ' + 'and another worker finishes the job',
    async () => {
      const { client, w1, w2 } = await cluster('-s', { SPECULA_SHUTDOWN_GRACE_MS: '0' });
      const { id, stream, holder } = await runningJob(client, [w1, w2]);
      holder.p.kill('SIGTERM');
      assert.equal(await holder.p.exited, 0, 'the stopped worker exits cleanly');
      assert.ok(
        holder.p.logs.some((l) => l.msg === 'job finished' && l.jobId === id && l.status === 'handed back'),
        'it logged handing the job back',
      );

      const events = (await stream).map((p: GqlResult<{ parseJobEvents: Event }>) => p.data?.parseJobEvents as Event);
      assert.ok(!events.some((e) => e.__typename === 'JobCancelled'), 'a stopping worker does not cancel the job');
      assert.ok(
        events.some((e) => e.__typename === 'JobRestarted'),
        'the subscriber is told the job started again',
      );
      assert.equal(events[events.length - 1].__typename, 'JobDone');
      const done = await job(client, id);
      assert.equal(done.status, 'SUCCEEDED');
      assert.equal(done.pages.length, 2);
    },
  );

  it(
    'an API process with no live worker: /readyz answers 503 saying why, the waiting job shows in /metrics and ' +
      'engine stats, and a worker attaching makes it ready and reads the job',
    async () => {
      const env = {
        SPECULA_REDIS_URL: REDIS,
        SPECULA_REDIS_PREFIX: `test-${randomUUID().slice(0, 8)}`,
        SPECULA_API_KEYS: 'acme:k-acme',
        SPECULA_CONCURRENCY: '1',
      };
      const api = await startSpecula('api-alone', 'api', env);
      procs.push(api.p);
      const base = `http://127.0.0.1:${api.port}`;
      const client = new ApiClient(base, 'k-acme');
      const STATS = '{ engine { stats { workers queuedJobs } } }';
      const stats = async (): Promise<unknown> =>
        (await client.query<{ engine: { stats: unknown } }>(STATS)).data?.engine.stats;
      const metrics = async (): Promise<string> => (await fetch(`${base}/metrics`)).text();

      const alone = await fetch(`${base}/readyz`);
      assert.equal(alone.status, 503);
      assert.match(((await alone.json()) as { reason?: string }).reason ?? '', /no live worker/);
      const id = await create(client, await stripOf(sample, 0), 'strip.png');
      assert.deepEqual(await stats(), { workers: 0, queuedJobs: 1 });
      const waiting = await metrics();
      assert.match(waiting, /^specula_workers 0$/m);
      assert.match(waiting, /^specula_queue_depth 1$/m);
      assert.equal((await job(client, id)).status, 'QUEUED');

      const worker = await startSpecula('worker-late', 'worker', env);
      procs.push(worker.p);
      let ready = 0;
      for (let i = 0; i < 100 && ready !== 200; i++) {
        ready = (await fetch(`${base}/readyz`)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(ready, 200, 'ready once a worker reports');
      let done = await job(client, id);
      for (let i = 0; i < 600 && (done.status === 'QUEUED' || done.status === 'RUNNING'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        done = await job(client, id);
      }
      assert.equal(done.status, 'SUCCEEDED');
      assert.deepEqual(await stats(), { workers: 1, queuedJobs: 0 });
      const working = await metrics();
      assert.match(working, /^specula_workers 1$/m);
      assert.match(working, /^specula_queue_depth 0$/m);
    },
  );

  describe('Redis restarted while jobs are queued', () => {
    const redis = new RedisServer(20_000 + Math.floor(Math.random() * 20_000));
    before(() => redis.start());
    after(() => redis.stop());

    it('every queued job still completes', async () => {
      const env = {
        SPECULA_REDIS_URL: redis.url,
        SPECULA_API_KEYS: 'acme:k-acme',
        SPECULA_CONCURRENCY: '1',
        SPECULA_LOCK_MS: '3000',
      };
      const api = await startSpecula('api-r', 'api', env);
      const worker = await startSpecula('worker-r', 'worker', env);
      procs.push(api.p, worker.p);
      const client = new ApiClient(`http://127.0.0.1:${api.port}`, 'k-acme');
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await create(client, await stripOf(sample, i), `strip-${i}.png`));
      await redis.stop();
      await new Promise((r) => setTimeout(r, 1500));
      await redis.start();
      const deadline = Date.now() + 120_000;
      let jobs: Job[] = [];
      while (Date.now() < deadline) {
        jobs = await Promise.all(ids.map((id) => job(client, id).catch(() => ({ status: 'UNKNOWN' }) as Job)));
        if (jobs.every((j) => j.status === 'SUCCEEDED' || j.status === 'FAILED')) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.deepEqual(
        jobs.map((j) => j.status),
        ['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED'],
      );
      assert.ok(jobs.every((j) => (j.markdown ?? '').length > 10));
    });
  });
});
