import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Engine } from '../src/engine/engine.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import type { Sequenced } from '../src/jobs/events.js';
import { MemoryBlobStore } from '../src/jobs/blob-store.js';
import { MemoryEventLog } from '../src/jobs/memory-event-log.js';
import { MemoryJobQueue } from '../src/jobs/memory-queue.js';
import { MemoryJobStore } from '../src/jobs/memory-store.js';
import { readDocument } from '../src/worker/read-document.js';
import { runJob, type WorkerDeps } from '../src/worker/run-job.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

describe('a worker runs parse jobs', () => {
  let deps: WorkerDeps & { store: MemoryJobStore; events: MemoryEventLog };
  let queue: MemoryJobQueue;
  const reported: unknown[] = [];
  before(async () => {
    deps = {
      engine: await Engine.open(),
      store: new MemoryJobStore(),
      blobs: new MemoryBlobStore(),
      events: new MemoryEventLog(),
      report: (e) => reported.push(e),
    };
    queue = new MemoryJobQueue();
    queue.process((id, signal) => runJob(deps, id, signal), 2);
  });
  after(async () => {
    await queue.close();
    await deps.engine.close();
  });

  async function submit(bytes: Uint8Array, fileName: string, decoding?: DecodingOptionsInput): Promise<string> {
    const job = await deps.store.create('t1', { fileName, size: bytes.length, decoding });
    await deps.blobs.put(job.id, bytes);
    await queue.enqueue(job.id);
    return job.id;
  }

  async function events(id: string): Promise<Sequenced[]> {
    const out: Sequenced[] = [];
    for await (const e of deps.events.subscribe(id)) out.push(e);
    return out;
  }

  it('streams tokens, regions and the page, then stores what the CLI would print', async () => {
    const bytes = readFileSync(SAMPLE_PAGE);
    const id = await submit(bytes, 'sample-page.png', { drafter: 'ctc', verifier: 'greedy', draftLength: 8 });
    const evs = await events(id);
    assert.deepEqual(
      evs.map((e) => e.seq),
      evs.map((_, i) => i + 1),
    );
    const types = new Set(evs.map((e) => e.type));
    for (const t of ['token', 'region', 'page', 'done']) assert.ok(types.has(t as never), `a ${t} event`);
    assert.equal(evs[evs.length - 1].type, 'done');
    const job = await deps.store.get('t1', id);
    assert.equal(job?.status, 'succeeded');
    const direct = await readDocument(deps.engine, bytes, 'sample-page.png', {
      decoding: { drafter: 'ctc', verifier: 'greedy', draftLength: 8 },
    });
    assert.equal(job?.result?.markdown, direct.markdown, 'same markdown as the CLI path');
    // Lines decode side by side, so their tokens interleave: put each line's back together.
    const byLine = new Map<number, string>();
    for (const e of evs) if (e.type === 'token') byLine.set(e.line, (byLine.get(e.line) ?? '') + e.text);
    const lines = direct.pages[0].blocks.flatMap((b) => b.lines.map((l) => l.text));
    assert.deepEqual(
      lines.map((_, i) => byLine.get(i) ?? ''),
      lines,
      'the token stream spells every line',
    );
  });

  it('a corrupt file fails its job with a typed error, and the next job still runs', async () => {
    const png = readFileSync(SAMPLE_PAGE);
    const bad = await submit(png.subarray(0, png.length >> 2), 'broken.png');
    const evs = await events(bad);
    const last = evs[evs.length - 1];
    assert.equal(last.type, 'failed');
    assert.equal(last.type === 'failed' ? last.code : '', 'CORRUPT_IMAGE');
    assert.equal((await deps.store.get('t1', bad))?.error?.code, 'CORRUPT_IMAGE');
    assert.equal(reported.length, 0, 'bad input is not an incident');
    const good = await submit(readFileSync(SAMPLE_PAGE), 'again.png');
    assert.equal((await events(good)).pop()?.type, 'done');
  });

  it('a cancelled job stops promptly and says so', async () => {
    const id = await submit(readFileSync(SAMPLE_PAGE), 'cancel-me.png');
    for await (const e of deps.events.subscribe(id)) {
      if (e.type === 'token') {
        await queue.cancel(id);
        break;
      }
    }
    const evs = await events(id);
    assert.equal(evs[evs.length - 1].type, 'cancelled');
    assert.equal((await deps.store.get('t1', id))?.status, 'cancelled');
  });
});
