import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { EventLog, Sequenced } from '../src/jobs/events.js';
import { createBackends } from '../src/jobs/backends.js';
import { FsBlobStore } from '../src/jobs/fs-blob-store.js';
import { MemoryEventLog } from '../src/jobs/memory-event-log.js';
import { MemoryJobQueue } from '../src/jobs/memory-queue.js';
import { MemoryJobStore } from '../src/jobs/memory-store.js';
import { RedisEventLog, REPLAY_PAGE } from '../src/jobs/redis-event-log.js';
import { RedisJobStore } from '../src/jobs/redis-store.js';
import type { JobStore } from '../src/jobs/store.js';
import { assertRedisReachable, TEST_REDIS as REDIS } from './helpers/redis.js';

before(() => assertRedisReachable(REDIS));

async function collect(it: AsyncIterable<Sequenced>): Promise<Sequenced[]> {
  const out: Sequenced[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Each backend gets the same tests: the embedded one, and Redis (a fresh key prefix per run, removed after). */
const connections: Redis[] = [];
const prefix = `test-${randomUUID().slice(0, 8)}`;
const redis = (): Redis => {
  const r = new Redis(REDIS, { maxRetriesPerRequest: null });
  connections.push(r);
  return r;
};
after(async () => {
  const r = connections[0];
  if (r) {
    const keys = await r.keys(`${prefix}:*`);
    if (keys.length) await r.del(...keys);
  }
  for (const c of connections) c.disconnect();
});

const backends: { name: string; log: () => EventLog; store: (retentionSeconds?: number) => JobStore }[] = [
  { name: 'in memory', log: () => new MemoryEventLog(), store: () => new MemoryJobStore() },
  {
    name: 'in Redis',
    log: () => new RedisEventLog(redis(), redis(), { prefix, retentionSeconds: 60 }),
    store: (retentionSeconds = 60) => new RedisJobStore(redis(), { prefix, retentionSeconds }),
  },
];

for (const b of backends) {
  describe(`job events ${b.name}`, () => {
    it('a late subscriber gets what it missed, then live events, with no gap and no duplicate', async () => {
      const log = b.log();
      const j = randomUUID();
      await log.publish(j, { type: 'token', page: 0, line: 0, text: 'He', fromDraft: [false, true] });
      await log.publish(j, { type: 'token', page: 0, line: 0, text: 'llo', fromDraft: [true, true, false] });
      const late = collect(log.subscribe(j));
      const fromTwo = collect(log.subscribe(j, 2));
      await new Promise((r) => setTimeout(r, 50));
      await log.publish(j, { type: 'page', page: 0, markdown: 'Hello' });
      await log.publish(j, { type: 'done', metrics: {} });
      await log.publish(j, { type: 'token', page: 9, line: 9, text: 'after the end', fromDraft: [] });
      const all = await late;
      assert.deepEqual(
        all.map((e) => e.seq),
        [1, 2, 3, 4],
        'ends with the final event',
      );
      assert.deepEqual(
        all.map((e) => e.type),
        ['token', 'token', 'page', 'done'],
      );
      assert.deepEqual(all[1], {
        type: 'token',
        page: 0,
        line: 0,
        text: 'llo',
        fromDraft: [true, true, false],
        seq: 2,
        jobId: j,
      });
      assert.deepEqual(
        (await fromTwo).map((e) => e.seq),
        [3, 4],
      );
      assert.deepEqual(await collect(log.subscribe(j, 4)), [], 'resuming after the final event ends at once');
    });

    it('a subscriber on one instance hears events published on another, in order', async () => {
      const [here, there] = [b.log(), b.name === 'in memory' ? null : b.log()];
      const pub = there ?? here;
      const j = randomUUID();
      const got = collect(here.subscribe(j));
      await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < 50; i++)
        await pub.publish(j, { type: 'token', page: 0, line: i % 3, text: String(i), fromDraft: [false] });
      await pub.publish(j, { type: 'done', metrics: {} });
      const all = await got;
      assert.deepEqual(
        all.map((e) => e.seq),
        Array.from({ length: 51 }, (_, i) => i + 1),
      );
    });

    it(
      'a late subscriber replays a long log (more than a page of it) in ' + 'order, from the start or a resume point',
      async () => {
        const log = b.log();
        const j = randomUUID();
        const n = 2 * REPLAY_PAGE + 7;
        for (let i = 0; i < n; i++)
          await log.publish(j, { type: 'token', page: 0, line: i % 5, text: 'x', fromDraft: [false] });
        await log.publish(j, { type: 'done', metrics: {} });
        assert.deepEqual(
          (await collect(log.subscribe(j))).map((e) => e.seq),
          Array.from({ length: n + 1 }, (_, i) => i + 1),
        );
        assert.deepEqual((await collect(log.subscribe(j, REPLAY_PAGE - 1))).map((e) => e.seq)[0], REPLAY_PAGE);
      },
    );

    it('a subscription stops when its signal aborts', async () => {
      const log = b.log();
      const ctrl = new AbortController();
      const k = randomUUID();
      const got = collect(log.subscribe(k, 0, ctrl.signal));
      await new Promise((r) => setTimeout(r, 50));
      await log.publish(k, { type: 'token', page: 0, line: 0, text: 'a', fromDraft: [false] });
      setTimeout(() => ctrl.abort(), 100);
      assert.equal((await got).length, 1);
    });
  });

  describe(`job store ${b.name}`, () => {
    it('a tenant sees only its own jobs, newest first, a page at a time', async () => {
      const store = b.store();
      const A = `A-${randomUUID()}`;
      const a = [];
      for (let i = 0; i < 5; i++) a.push(await store.create(A, { fileName: `a${i}.png`, size: 1 }));
      const b2 = await store.create('B', { fileName: 'b.png', size: 1 });
      assert.equal(await store.get(A, b2.id), null, "A cannot read B's job");
      assert.equal((await store.get('B', b2.id))?.input.fileName, 'b.png');
      assert.deepEqual(
        (await store.getMany(A, [a[0].id, b2.id])).map((j) => j?.input.fileName ?? null),
        ['a0.png', null],
      );
      const p1 = await store.list(A, 2);
      assert.deepEqual(
        p1.jobs.map((j) => j.input.fileName),
        ['a4.png', 'a3.png'],
      );
      assert.ok(p1.hasNextPage);
      const p2 = await store.list(A, 10, p1.endCursor ?? undefined);
      assert.deepEqual(
        p2.jobs.map((j) => j.input.fileName),
        ['a2.png', 'a1.png', 'a0.png'],
      );
      assert.equal(p2.hasNextPage, false);
      assert.deepEqual((await store.list(A, 10, b2.id)).jobs, [], "B's cursor pages nothing of A's");
      // Towards newer jobs: the ones nearest the cursor, still newest first; without a cursor, the oldest.
      const n1 = await store.list(A, 2, a[1].id, 'newer');
      assert.deepEqual(
        n1.jobs.map((j) => j.input.fileName),
        ['a3.png', 'a2.png'],
      );
      assert.equal(n1.hasNextPage, true, 'a4 is newer still');
      assert.equal(n1.endCursor, a[3].id);
      const n2 = await store.list(A, 2, n1.endCursor ?? undefined, 'newer');
      assert.deepEqual(
        n2.jobs.map((j) => j.input.fileName),
        ['a4.png'],
      );
      assert.equal(n2.hasNextPage, false);
      assert.deepEqual(
        (await store.list(A, 2, undefined, 'newer')).jobs.map((j) => j.input.fileName),
        ['a1.png', 'a0.png'],
      );
    });

    it('status changes happen once: the first transition wins, the rest see it was taken', async () => {
      const store = b.store();
      const t = `T-${randomUUID()}`;
      const job = await store.create(t, { fileName: 'x.png', size: 1, formats: [] });
      assert.equal(await store.countActive(t), 1);
      const both = await Promise.all([
        store.transition(job.id, ['queued'], { status: 'running' }),
        store.transition(job.id, ['queued'], { status: 'cancelled' }),
      ]);
      assert.equal(both.filter(Boolean).length, 1, 'exactly one wins');
      const now = await store.load(job.id);
      assert.equal(now?.input.formats?.length, 0, 'empty arrays survive the round trip');
      if (now?.status === 'running') {
        const done = await store.transition(job.id, ['running'], {
          status: 'succeeded',
          result: { format: 'png', pageCount: 1, pages: [], metrics: { forwards: 3 } },
        });
        assert.equal(done?.result?.metrics.forwards, 3);
      }
      assert.equal(await store.countActive(t), 0, 'a finished job is no longer active');
      assert.equal(await store.transition(job.id, ['queued', 'running'], { status: 'failed' }), null);
    });
  });
}

describe('job store in Redis: retention', () => {
  it('a finished job expires after the retention period, and leaves the listing', async () => {
    const store = backends[1].store(1);
    const t = `R-${randomUUID()}`;
    const keep = await store.create(t, { fileName: 'keep.png', size: 1 });
    const gone = await store.create(t, { fileName: 'gone.png', size: 1 });
    await store.transition(gone.id, ['queued'], { status: 'failed', error: { code: 'INTERNAL', message: 'x' } });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await store.get(t, gone.id), null);
    assert.deepEqual(
      (await store.list(t, 10)).jobs.map((j) => j.id),
      [keep.id],
      'unfinished jobs stay',
    );
  });

  it('expired jobs among the newest do not cut a page short', async () => {
    const store = backends[1].store();
    const t = `E-${randomUUID()}`;
    const made = [];
    for (let i = 0; i < 8; i++) made.push(await store.create(t, { fileName: `e${i}.png`, size: 1 }));
    // The newest three and one more expired (records gone, index entries still there, as retention leaves them):
    // the page needs three reads of the index, two of them with expired entries.
    await redis().del(...[...made.slice(5), made[2]].map((j) => `${prefix}:job:${j.id}`));
    const p1 = await store.list(t, 3);
    assert.deepEqual(
      p1.jobs.map((j) => j.input.fileName),
      ['e4.png', 'e3.png', 'e1.png'],
      'a full page past the expired ones',
    );
    assert.equal(p1.hasNextPage, true, 'e0 is still there');
    const p2 = await store.list(t, 3, p1.endCursor ?? undefined);
    assert.deepEqual(
      p2.jobs.map((j) => j.input.fileName),
      ['e0.png'],
    );
    assert.equal(p2.hasNextPage, false);
  });
});

describe('job store in memory: retention', () => {
  it('the embedded mode forgets finished jobs after the retention period, as Redis does', async () => {
    const b = await createBackends({
      blobDir: null,
      redisBlobMaxBytes: 1,
      retentionSeconds: 1,
      jobAttempts: 1,
      tenantConcurrency: 1,
      lockMs: 1000,
    });
    try {
      const keep = await b.store.create('T', { fileName: 'keep.png', size: 1 });
      const gone = await b.store.create('T', { fileName: 'gone.png', size: 1 });
      await b.store.transition(gone.id, ['queued'], { status: 'succeeded' });
      await b.events.publish(gone.id, { type: 'done', metrics: {} });
      await new Promise((r) => setTimeout(r, 2300));
      assert.equal(await b.store.get('T', gone.id), null);
      assert.deepEqual(
        (await b.store.list('T', 10)).jobs.map((j) => j.id),
        [keep.id],
      );
    } finally {
      await b.close();
    }
  });
});

describe('job queue', () => {
  it('runs at most `concurrency` jobs at once and cancels waiting and running ones', async () => {
    const q = new MemoryJobQueue();
    let running = 0;
    let peak = 0;
    const finished: string[] = [];
    const release = new Map<string, () => void>();
    const aborted: string[] = [];
    q.process(async (id, signal) => {
      running++;
      peak = Math.max(peak, running);
      signal.addEventListener('abort', () => aborted.push(id));
      await new Promise<void>((r) => release.set(id, r));
      running--;
      finished.push(id);
    }, 2);
    for (const id of ['1', '2', '3', '4']) await q.enqueue(id);
    assert.equal(await q.depth(), 2);
    assert.equal(await q.cancel('4'), true, 'a waiting job is taken off the queue');
    assert.equal(await q.cancel('1'), true, 'a running job is signalled');
    assert.deepEqual(aborted, ['1']);
    for (const id of ['1', '2']) release.get(id)?.();
    await new Promise((r) => setImmediate(r));
    release.get('3')?.();
    await new Promise((r) => setImmediate(r));
    assert.equal(peak, 2);
    assert.deepEqual(finished.sort(), ['1', '2', '3']);
    assert.equal(await q.cancel('nope'), false);
  });
});

describe('uploads on disk in the embedded mode', () => {
  it("each process keeps its own folder, removes it when it stops, and removes a dead process's folder", async () => {
    const root = mkdtempSync(join(tmpdir(), 'specula-blob-test-'));
    try {
      // A process that has exited (it ran and ended: its pid is gone), which left an upload behind.
      const gone = spawnSync(process.execPath, ['-e', '']).pid;
      const orphan = join(root, `pid-${gone}-abc`);
      mkdirSync(orphan);
      writeFileSync(join(orphan, 'job-1'), 'bytes');
      const first = new FsBlobStore(root);
      assert.ok(!existsSync(orphan), "the dead process's folder is removed");
      await first.put('job-2', new Uint8Array([1, 2, 3]));
      const second = new FsBlobStore(root); // another live process on the same root (here: the same one)
      assert.deepEqual(await first.get('job-2'), new Uint8Array([1, 2, 3]), "a live process's uploads stay");
      assert.equal(await second.get('job-2'), null, 'each store sees only its own uploads');
      await first.close();
      assert.ok(!existsSync(first.dir), 'stopping removes the folder');
      assert.ok(existsSync(second.dir));
      await second.close();
      assert.deepEqual(readdirSync(root), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
