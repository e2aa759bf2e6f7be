/**
 * Admission by memory: the pages rendered and laid out at once stay within a budget of pixels across every
 * document the process reads (src/worker/pixel-budget.ts), so six huge blank pages wait their turn instead of
 * holding six full-size copies at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { DEFAULT_SOURCE_LIMITS } from '../src/document/source.js';
import { Engine } from '../src/engine/engine.js';
import { PixelBudget, sharedPixelBudget } from '../src/worker/pixel-budget.js';
import { readDocument } from '../src/worker/read-document.js';

describe('the pixel budget', () => {
  it('admits what fits at once, and the rest in order as pixels are released', async () => {
    const budget = new PixelBudget(100);
    const order: string[] = [];
    const a = await budget.acquire(60);
    const b = budget.acquire(60).then((release) => (order.push('b'), release));
    const c = budget.acquire(30).then((release) => (order.push('c'), release));
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(order, [], 'b waits for room, and c waits behind b (first come, first served)');
    a();
    (await b)();
    (await c)();
    assert.deepEqual(order, ['b', 'c']);
    assert.equal(budget.peak, 90);
  });

  it('admits a page larger than the whole budget alone, and drops a waiter whose read is cancelled', async () => {
    const budget = new PixelBudget(100);
    const big = await budget.acquire(1_000);
    const stop = new AbortController();
    const waiting = budget.acquire(10, stop.signal);
    stop.abort(new Error('cancelled'));
    await assert.rejects(waiting, /cancelled/);
    big();
    (await budget.acquire(100))();
    assert.equal(budget.peak, 100);
  });
});

describe('pages admitted by pixels across documents', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(async () => {
    await engine.close();
  });

  it('reads three large blank pages at once with never more than the budget of pixels in flight', async () => {
    const page = await sharp({
      create: { width: 3000, height: 3000, channels: 3, background: { r: 255, g: 255, b: 255 } },
    })
      .png()
      .toBuffer();
    const limits = { ...DEFAULT_SOURCE_LIMITS, pixelsInFlight: 9_000_001 };
    const reads = await Promise.all(
      [0, 1, 2].map((i) => readDocument(engine, new Uint8Array(page), `blank-${i}.png`, { limits })),
    );
    assert.deepEqual(
      reads.map((r) => r.pageCount),
      [1, 1, 1],
    );
    assert.equal(sharedPixelBudget(limits).peak, 9_000_000, 'one page of 3000x3000 at a time');
  });
});
