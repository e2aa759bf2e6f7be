import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, codes } from './helpers/api-client.js';
import { RedisServer, type SpeculaProcess, startSpecula } from './helpers/processes.js';

const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id status } }';
const JOB = 'query($id: ID!) { parseJob(id: $id) { id status } }';
/** A tiny PNG is enough: these tests are about the store, not the reading. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAAAAADhZOFXAAAAEklEQVR4nGP8z8DAwMDAxAADABIgAgFN2uD1AAAAAElFTkSuQmCC',
  'base64',
).toString('base64');

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await f();
  return { value, ms: performance.now() - t0 };
}

describe('a Redis outage, seen from an API process', () => {
  const redis = new RedisServer(16000 + Math.floor(Math.random() * 2000));
  let api: SpeculaProcess;
  let base: string;
  let client: ApiClient;
  before(async () => {
    await redis.start();
    const started = await startSpecula('api', 'api', {
      SPECULA_REDIS_URL: redis.url,
      SPECULA_REDIS_PREFIX: `outage-${process.pid}`,
      SPECULA_API_KEYS: 'acme:k1',
      // No worker here: these tests are about the store, and readiness about workers has its own test.
      SPECULA_READY_MIN_WORKERS: '0',
    });
    api = started.p;
    base = `http://127.0.0.1:${started.port}`;
    client = new ApiClient(base, 'k1');
  });
  after(async () => {
    redis.proc?.kill('SIGCONT');
    api?.kill();
    await redis.stop();
  });

  const readyz = async (): Promise<number> => (await fetch(`${base}/readyz`)).status;

  it(
    'frozen Redis: requests fail fast with STORE_UNAVAILABLE, /readyz says ' + '503, and all is well once it thaws',
    async () => {
      assert.equal(await readyz(), 200);
      const first = await client.query<{ createParseJob: { id: string } }>(CREATE, {
        input: { base64: PNG, fileName: 'a.png' },
      });
      assert.equal(first.errors, undefined, JSON.stringify(first.errors));
      const id = first.data?.createParseJob.id as string;
      redis.proc?.kill('SIGSTOP');
      try {
        const ready = await timed(readyz);
        assert.equal(ready.value, 503);
        assert.ok(ready.ms < 5000, `readyz took ${ready.ms} ms`);
        const read = await timed(() => client.query(JOB, { id }));
        if (process.env.DEBUG) console.log(JSON.stringify(read));
        assert.deepEqual(codes(read.value), ['STORE_UNAVAILABLE']);
        assert.ok(read.ms < 10_000, `parseJob took ${read.ms} ms`);
        const create = await timed(() =>
          client.query(CREATE, { input: { base64: PNG, fileName: 'b.png', idempotencyKey: 'retry-me' } }),
        );
        assert.deepEqual(codes(create.value), ['STORE_UNAVAILABLE']);
        assert.ok(create.ms < 10_000, `createParseJob took ${create.ms} ms`);
      } finally {
        redis.proc?.kill('SIGCONT');
      }
      for (let i = 0; i < 50 && (await readyz()) !== 200; i++) await new Promise((r) => setTimeout(r, 200));
      assert.equal(await readyz(), 200);
      const again = await client.query<{ parseJob: { id: string } }>(JOB, { id });
      assert.equal(again.data?.parseJob.id, id);
      // The client retries the create it never heard back from, twice, with its key: one job, whatever reached Redis.
      const retry = await client.query<{ createParseJob: { id: string } }>(CREATE, {
        input: { base64: PNG, fileName: 'b.png', idempotencyKey: 'retry-me' },
      });
      const retry2 = await client.query<{ createParseJob: { id: string } }>(CREATE, {
        input: { base64: PNG, fileName: 'b.png', idempotencyKey: 'retry-me' },
      });
      assert.equal(retry.errors, undefined, JSON.stringify(retry.errors));
      assert.equal(retry2.data?.createParseJob.id, retry.data?.createParseJob.id);
      const list = await client.query<{ parseJobs: { edges: { node: { fileName: string } }[] } }>(
        '{ parseJobs(first: 50) { edges { node { fileName } } } }',
      );
      assert.equal(list.data?.parseJobs.edges.filter((e) => e.node.fileName === 'b.png').length, 1, 'one b.png job');
    },
  );

  it(
    'frozen Redis: /metrics still answers 200 with the process metrics, says the store is unreachable and leaves ' +
      'out the figures read from it',
    async () => {
      const scrape = async (): Promise<{ status: number; text: string }> => {
        const res = await fetch(`${base}/metrics`);
        return { status: res.status, text: await res.text() };
      };
      const up = await scrape();
      assert.equal(up.status, 200);
      assert.match(up.text, /^specula_queue_depth \d+$/m);
      redis.proc?.kill('SIGSTOP');
      try {
        for (const outage of [await scrape(), await scrape()]) {
          assert.equal(outage.status, 200, outage.text.slice(0, 200));
          assert.match(outage.text, /^specula_store_up 0$/m);
          assert.match(outage.text, /^specula_process_cpu_seconds_total /m);
          assert.match(outage.text, /^specula_nodejs_heap_size_used_bytes /m);
          assert.doesNotMatch(outage.text, /^specula_queue_depth /m, 'no stale or made-up queue depth');
          assert.doesNotMatch(outage.text, /^specula_workers /m);
        }
      } finally {
        redis.proc?.kill('SIGCONT');
      }
      let back = await scrape();
      for (let i = 0; i < 50 && !/^specula_store_up 1$/m.test(back.text); i++) {
        await new Promise((r) => setTimeout(r, 200));
        back = await scrape();
      }
      assert.match(back.text, /^specula_store_up 1$/m);
      assert.match(back.text, /^specula_queue_depth \d+$/m);
    },
  );

  it(
    'killed Redis: the same, quicker; the log stays JSON lines (no ioredis ' + 'stack traces) and the API recovers',
    async () => {
      await redis.stop();
      const ready = await timed(readyz);
      assert.equal(ready.value, 503);
      const create = await timed(() => client.query(CREATE, { input: { base64: PNG, fileName: 'c.png' } }));
      assert.deepEqual(codes(create.value), ['STORE_UNAVAILABLE']);
      assert.ok(create.ms < 5000, `createParseJob took ${create.ms} ms`);
      await redis.start();
      for (let i = 0; i < 150 && (await readyz()) !== 200; i++) await new Promise((r) => setTimeout(r, 200));
      assert.equal(await readyz(), 200);
      assert.ok(api.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('redis unreachable')));
      assert.doesNotMatch(api.stderr.join(''), /Unhandled error event/);
      for (const l of api.logs)
        assert.equal(typeof l.level, 'number', `a JSON log line: ${JSON.stringify(l).slice(0, 200)}`);
    },
  );
});
