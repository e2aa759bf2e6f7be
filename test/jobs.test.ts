import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Sequenced } from '../src/jobs/events.js';
import { MemoryEventLog } from '../src/jobs/memory-event-log.js';
import { MemoryJobQueue } from '../src/jobs/memory-queue.js';
import { MemoryJobStore } from '../src/jobs/memory-store.js';

async function collect(it: AsyncIterable<Sequenced>): Promise<Sequenced[]> {
  const out: Sequenced[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe('job events', () => {
  it('a late subscriber gets what it missed, then live events, with no gap and no duplicate', async () => {
    const log = new MemoryEventLog();
    await log.publish('j', { type: 'token', page: 0, line: 0, text: 'He', fromDraft: [false, true] });
    await log.publish('j', { type: 'token', page: 0, line: 0, text: 'llo', fromDraft: [true, true, false] });
    const late = collect(log.subscribe('j'));
    const fromTwo = collect(log.subscribe('j', 2));
    await log.publish('j', { type: 'page', page: 0, markdown: 'Hello' });
    await log.publish('j', { type: 'done', metrics: {} });
    await log.publish('j', { type: 'token', page: 9, line: 9, text: 'after the end', fromDraft: [] });
    const all = await late;
    assert.deepEqual(all.map((e) => e.seq), [1, 2, 3, 4], 'ends with the final event');
    assert.deepEqual(all.map((e) => e.type), ['token', 'token', 'page', 'done']);
    assert.deepEqual((await fromTwo).map((e) => e.seq), [3, 4]);
  });

  it('a subscription stops when its signal aborts', async () => {
    const log = new MemoryEventLog();
    const ctrl = new AbortController();
    const got = collect(log.subscribe('k', 0, ctrl.signal));
    await log.publish('k', { type: 'token', page: 0, line: 0, text: 'a', fromDraft: [false] });
    setImmediate(() => ctrl.abort());
    assert.equal((await got).length, 1);
  });
});

describe('job store', () => {
  it('a tenant sees only its own jobs, newest first, a page at a time', async () => {
    const store = new MemoryJobStore();
    const a = [];
    for (let i = 0; i < 5; i++) a.push(await store.create('A', { fileName: `a${i}.png`, size: 1 }));
    const b = await store.create('B', { fileName: 'b.png', size: 1 });
    assert.equal(await store.get('A', b.id), null, "A cannot read B's job");
    assert.equal((await store.get('B', b.id))?.input.fileName, 'b.png');
    const p1 = await store.list('A', 2);
    assert.deepEqual(p1.jobs.map((j) => j.input.fileName), ['a4.png', 'a3.png']);
    assert.ok(p1.hasNextPage);
    const p2 = await store.list('A', 10, p1.endCursor ?? undefined);
    assert.deepEqual(p2.jobs.map((j) => j.input.fileName), ['a2.png', 'a1.png', 'a0.png']);
    assert.equal(p2.hasNextPage, false);
    assert.deepEqual((await store.list('A', 10, b.id)).jobs, [], "B's cursor pages nothing of A's");
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
