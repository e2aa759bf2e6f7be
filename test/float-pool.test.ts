import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FloatPool, sizeClass } from '../src/engine/decode/float-pool.js';

describe('recycled buffers for the batch state', () => {
  it('a buffer handed back is reused for a similar size, and comes back zeroed', () => {
    const pool = new FloatPool();
    const a = pool.take(1000);
    a.fill(7);
    pool.give(a);
    const b = pool.take(900);
    assert.equal(b.buffer, a.buffer, 'the same memory');
    assert.equal(b.length, 900);
    assert.ok(
      b.every((x) => x === 0),
      'no values of its last use',
    );
    assert.equal(pool.bytes, 0, 'taken again, so not held');
  });

  it('never hands one buffer to two users: a repeat give, or an array it did not make, is ignored', () => {
    const pool = new FloatPool();
    const a = pool.take(100);
    pool.give(a);
    pool.give(a);
    pool.give(new Float32Array(100));
    const x = pool.take(100);
    const y = pool.take(100);
    assert.notEqual(x.buffer, y.buffer);
  });

  it('serves an array from the smallest free buffer that holds it, and holds no more than its cap', () => {
    const pool = new FloatPool(8 * 4096 * 4);
    const big = pool.take(4096 * 4);
    const small = pool.take(4096);
    pool.give(big, small);
    assert.equal(pool.take(3000).buffer, small.buffer, 'the smaller of the two that fit');
    assert.equal(pool.take(3000).buffer, big.buffer, 'then the larger rather than a fresh one');
    pool.give(...Array.from({ length: 12 }, () => pool.take(4096)));
    assert.ok(pool.bytes <= 8 * 4096 * 4);
  });

  it('makes buffers in size classes, so a rebuild a little larger than the last reuses its memory', () => {
    const pool = new FloatPool();
    const a = pool.take(100_000);
    assert.equal(a.buffer.byteLength, sizeClass(100_000) * 4);
    assert.ok(sizeClass(100_000) >= 100_000 && sizeClass(100_000) < 100_000 * Math.SQRT2 + 1024);
    pool.give(a);
    assert.equal(pool.take(sizeClass(100_000)).buffer, a.buffer);
  });
});

describe('the gather scratch', () => {
  it('hands the same memory back step after step, grown only when a step needs more', () => {
    const pool = new FloatPool();
    const a = pool.scratch('k', 1000);
    a[0] = 7;
    const b = pool.scratch('k', 800);
    assert.equal(b.buffer, a.buffer, 'a smaller step reuses the buffer');
    assert.equal(b[0], 7, 'and does not pay to zero it');
    const c = pool.scratch('k', 5000);
    assert.equal(c.length, 5000);
    assert.notEqual(c.buffer, a.buffer, 'a larger step grows it');
    assert.notEqual(pool.scratch('v', 10).buffer, c.buffer, 'each key has its own');
    assert.equal(pool.bytes, 0, "scratch buffers are not the pool's to hand out");
  });
});
