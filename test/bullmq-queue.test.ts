/** The BullMQ queue on a real Redis: per-tenant concurrency and rate limits across workers, cancellation, and a
 * stopping worker's running jobs (finished within the grace period, else handed back).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { BullJobQueue } from '../src/jobs/bullmq-queue.js';
import { WorkerStopping } from '../src/jobs/queue.js';

import { assertRedisReachable, TEST_REDIS as REDIS } from './helpers/redis.js';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('the BullMQ job queue', () => {
  before(() => assertRedisReachable(REDIS));
  const queues: BullJobQueue[] = [];
  const prefixes: string[] = [];
  const make = (opts: Partial<ConstructorParameters<typeof BullJobQueue>[0]> = {}): BullJobQueue => {
    const prefix = `test-${randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    const q = new BullJobQueue({
      url: REDIS,
      prefix,
      attempts: 2,
      tenantConcurrency: 10,
      retentionSeconds: 60,
      lockMs: 5000,
      ...opts,
    });
    queues.push(q);
    return q;
  };
  after(async () => {
    for (const q of queues) await q.close();
    const r = new Redis(REDIS);
    for (const p of prefixes) {
      const keys = await r.keys(`${p}:*`);
      if (keys.length) await r.del(...keys);
    }
    r.disconnect();
  });

  it("runs at most the tenant's share at once, across two workers, without holding up other tenants", async () => {
    const a = make({ tenantConcurrency: 1 });
    // A second worker on the same queue and prefix: a different process in production.
    const b = new BullJobQueue({
      url: REDIS,
      prefix: prefixes[prefixes.length - 1],
      attempts: 2,
      tenantConcurrency: 1,
      retentionSeconds: 60,
      lockMs: 5000,
    });
    queues.push(b);
    const spans: { id: string; tenant?: string; start: number; end: number }[] = [];
    const handler = async (id: string, _signal: AbortSignal, run: { tenant?: string }): Promise<void> => {
      const start = Date.now();
      await sleep(300);
      spans.push({ id, tenant: run.tenant, start, end: Date.now() });
    };
    a.process(handler, 4);
    b.process(handler, 4);
    for (let i = 0; i < 3; i++) await a.enqueue(`t-${i}-${randomUUID()}`, { tenant: 'busy' });
    await a.enqueue(`u-${randomUUID()}`, { tenant: 'other' });
    for (let i = 0; i < 100 && spans.length < 4; i++) await sleep(100);
    assert.equal(spans.length, 4, 'every job ran');
    const busy = spans.filter((s) => s.tenant === 'busy').sort((x, y) => x.start - y.start);
    for (let i = 1; i < busy.length; i++) assert.ok(busy[i].start >= busy[i - 1].end, 'one "busy" job at a time');
    const other = spans.find((s) => s.tenant === 'other');
    assert.ok(other && other.start < busy[busy.length - 1].start, 'the other tenant did not wait behind them');
  });

  it("starts at most the tenant's rate per minute", async () => {
    const q = make({ tenantRatePerMinute: 2 });
    const started: string[] = [];
    q.process(async (id) => {
      started.push(id);
    }, 4);
    for (let i = 0; i < 3; i++) await q.enqueue(`r-${i}-${randomUUID()}`, { tenant: 'metered' });
    await sleep(2500);
    assert.equal(started.length, 2, 'the third waits for the next minute');
  });

  it('a stopping worker finishes a short job and hands a long one back, unspent, to another worker', async () => {
    const a = make({ shutdownGraceMs: 400 });
    const prefix = prefixes[prefixes.length - 1];
    const reasons: unknown[] = [];
    const finishedOnA: string[] = [];
    a.process(async (id, signal) => {
      // The short job ends inside the grace period; the long one would take 10 s.
      const ms = id.startsWith('short') ? 100 : 10_000;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
      if (signal.aborted) {
        reasons.push(signal.reason);
        throw signal.reason; // what run-job does with WorkerStopping
      }
      finishedOnA.push(id);
    }, 2);
    const short = `short-${randomUUID()}`;
    const long = `long-${randomUUID()}`;
    await a.enqueue(short);
    await a.enqueue(long);
    await sleep(50);
    await a.close();
    assert.deepEqual(finishedOnA, [short], 'the short job finished on the stopping worker');
    assert.equal(reasons.length, 1);
    assert.ok(reasons[0] instanceof WorkerStopping, 'the long one was told why: the worker is stopping, not a cancel');
    const b = new BullJobQueue({
      url: REDIS,
      prefix,
      attempts: 2,
      tenantConcurrency: 10,
      retentionSeconds: 60,
      lockMs: 5000,
    });
    queues.push(b);
    const onB: { id: string; attempt: number }[] = [];
    b.process(async (id, _signal, run) => {
      onB.push({ id, attempt: run.attempt });
    }, 2);
    for (let i = 0; i < 50 && !onB.length; i++) await sleep(100);
    assert.deepEqual(onB, [{ id: long, attempt: 1 }], 'another worker took it up, its attempts unspent');
  });

  it('cancels a waiting job outright and signals a running one', async () => {
    const q = make({ tenantConcurrency: 1 });
    const aborted: string[] = [];
    const ran: string[] = [];
    q.process(async (id, signal) => {
      ran.push(id);
      await new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => {
          aborted.push(id);
          resolve();
        });
        setTimeout(resolve, 4000);
      });
    }, 1);
    const first = `c1-${randomUUID()}`;
    const second = `c2-${randomUUID()}`;
    await q.enqueue(first, { tenant: 't' });
    await q.enqueue(second, { tenant: 't' });
    for (let i = 0; i < 50 && !ran.length; i++) await sleep(50);
    assert.equal(await q.cancel(second), true, 'the waiting one is removed');
    assert.equal(await q.cancel(first), true, 'the running one is signalled');
    for (let i = 0; i < 50 && !aborted.length; i++) await sleep(50);
    assert.deepEqual(aborted, [first]);
    await sleep(500);
    assert.deepEqual(ran, [first], 'the cancelled waiting job never ran');
  });
});
