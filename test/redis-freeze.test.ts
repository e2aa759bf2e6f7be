/**
 * A Redis that freezes for longer than the job lock while jobs run (SIGSTOP, then SIGCONT): the workers' locks
 * lapse, the jobs are taken up again, and still each job has one run that ends it, a stream that ends at its
 * JobDone, and token deltas that, read as docs/api.md says (drop what they built on JobRestarted), spell the
 * stored lines.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ApiClient } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';
import { RedisServer, type SpeculaProcess, startSpecula } from './helpers/processes.js';

const PREFIX = 'freeze';
const LOCK_MS = 2000;
const JOBS = 4;
const EVENTS = `subscription($id: ID!) { parseJobEvents(id: $id) {
  __typename ... on JobEvent { seq } ... on TokenDelta { page line text }
} }`;
const JOB = `query($id: ID!) { parseJob(id: $id) { status pages { index blocks { lines { text } } } } }`;

interface Job {
  status: string;
  pages: { index: number; blocks: { lines: { text: string }[] }[] }[];
}
interface Logged {
  seq: number;
  type: string;
  page?: number;
  line?: number;
  text?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The lines a client builds from a stream read as documented: token texts appended per line, reset on a restart. */
function linesOf(events: { kind: string; page?: number; line?: number; text?: string }[]): Map<string, string> {
  let lines = new Map<string, string>();
  for (const e of events) {
    if (e.kind === 'restarted') lines = new Map();
    if (e.kind !== 'token') continue;
    const key = `${e.page}:${e.line}`;
    lines.set(key, (lines.get(key) ?? '') + e.text);
  }
  return lines;
}

describe('Redis frozen for longer than the job lock while jobs run', () => {
  const redis = new RedisServer(22_000 + Math.floor(Math.random() * 2000));
  const procs: SpeculaProcess[] = [];
  let direct: Redis;
  before(async () => {
    await redis.start();
    direct = new Redis(redis.url, { maxRetriesPerRequest: null });
  });
  after(async () => {
    redis.proc?.kill('SIGCONT');
    for (const p of procs) p.kill('SIGKILL');
    direct?.disconnect();
    await redis.stop();
  });

  it('each job has one run that ends it, a stream that ends at JobDone, and lines rebuilt as stored', async () => {
    const env = {
      SPECULA_REDIS_URL: redis.url,
      SPECULA_REDIS_PREFIX: PREFIX,
      SPECULA_API_KEYS: 'acme:k-acme',
      SPECULA_CONCURRENCY: '2',
      SPECULA_LOCK_MS: String(LOCK_MS),
    };
    const [api, w1, w2] = await Promise.all([
      startSpecula('api-f', 'api', env),
      startSpecula('worker-f1', 'worker', env),
      startSpecula('worker-f2', 'worker', env),
    ]);
    procs.push(api.p, w1.p, w2.p);
    const workers = [w1.p, w2.p];
    const client = new ApiClient(`http://127.0.0.1:${api.port}`, 'k-acme');
    const sample = readFileSync(SAMPLE_PAGE);
    const pdf = Buffer.from(pdfOfImages([sample, sample])).toString('base64');
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const r = await client.query<{ createParseJob: { id: string } }>(
        `mutation($b: String!) { createParseJob(input: { base64: $b, fileName: "two-pages.pdf" }) { id } }`,
        { b: pdf },
      );
      assert.equal(r.errors, undefined, JSON.stringify(r.errors));
      ids.push((r.data as { createParseJob: { id: string } }).createParseJob.id);
    }
    // Freeze once every worker is decoding (tokens in the logs of as many jobs as run at once).
    const logKey = (id: string): string => `${PREFIX}:job:${id}:events`;
    for (let i = 0; i < 600; i++) {
      const lens = await Promise.all(ids.map((id) => direct.llen(logKey(id))));
      if (lens.filter((n) => n > 0).length >= 4) break;
      await sleep(50);
    }
    redis.proc?.kill('SIGSTOP');
    await sleep(LOCK_MS * 3);
    redis.proc?.kill('SIGCONT');

    const deadline = Date.now() + 90_000;
    let jobs: Job[] = [];
    while (Date.now() < deadline) {
      jobs = await Promise.all(
        ids.map(async (id) => (await client.query<{ parseJob: Job }>(JOB, { id })).data?.parseJob ?? ({} as Job)),
      );
      if (jobs.every((j) => j.status === 'SUCCEEDED' || j.status === 'FAILED')) break;
      await sleep(300);
    }
    assert.deepEqual(
      jobs.map((j) => j.status),
      ids.map(() => 'SUCCEEDED'),
    );
    // A run that lost its job may still be winding down: give it time to write whatever it would.
    await sleep(LOCK_MS * 2);
    const starts = (id: string): number =>
      workers.reduce((n, w) => n + w.logs.filter((l) => l.msg === 'job started' && l.jobId === id).length, 0);
    assert.ok(
      ids.some((id) => starts(id) > 1),
      'the freeze had a job taken up again',
    );

    for (const [k, id] of ids.entries()) {
      const succeeded = workers.flatMap((w) =>
        w.logs.filter((l) => l.msg === 'job finished' && l.jobId === id && l.status === 'succeeded'),
      );
      assert.equal(succeeded.length, 1, `job ${k}: one run ends it (started ${starts(id)} times)`);
      const log = (await direct.lrange(logKey(id), 0, -1)).map((r) => JSON.parse(r) as Logged);
      assert.deepEqual(
        log.map((e) => e.seq),
        log.map((_, i) => i + 1),
      );
      assert.equal(log.filter((e) => e.type === 'done').length, 1, `job ${k}: one JobDone`);
      assert.equal(log[log.length - 1].type, 'done', `job ${k}: nothing after JobDone (of ${log.length} events)`);
      // What a client reads: the whole stream, replayed from the start through the API.
      const stream = (await client.sse<{ parseJobEvents: Logged & { __typename: string } }>(EVENTS, { id })).map(
        (p) => p.data?.parseJobEvents as Logged & { __typename: string },
      );
      assert.equal(stream[stream.length - 1].__typename, 'JobDone');
      const kinds: Record<string, string> = { TokenDelta: 'token', JobRestarted: 'restarted' };
      const lines = linesOf(stream.map((e) => ({ ...e, kind: kinds[e.__typename] ?? '' })));
      for (const page of jobs[k].pages) {
        const want = page.blocks.flatMap((b) => b.lines.map((l) => l.text));
        assert.deepEqual(
          want.map((_, i) => lines.get(`${page.index}:${i}`) ?? ''),
          want,
          `job ${k}, page ${page.index}: the lines rebuilt from the stream are the stored ones`,
        );
      }
    }
  });
});
