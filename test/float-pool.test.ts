import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FloatPool } from '../src/engine/float-pool.js';

describe('recycled buffers for the batch state', () => {
  it('a buffer handed back is reused for a similar size, and comes back zeroed', () => {
    const pool = new FloatPool();
    const a = pool.take(1000);
    a.fill(7);
    pool.give(a);
    const b = pool.take(900);
    assert.equal(b.buffer, a.buffer, 'the same memory');
    assert.equal(b.length, 900);
    assert.ok(b.every((x) => x === 0), 'no values of its last use');
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

  it('holds no more than its cap, and does not waste a large buffer on a small array', () => {
    const pool = new FloatPool(4096 * 4);
    const big = pool.take(4096);
    pool.give(big);
    assert.notEqual(pool.take(100).buffer, big.buffer, 'too big to spend on 100 floats');
    pool.give(pool.take(4096), pool.take(4096));
    assert.ok(pool.bytes <= 4096 * 4);
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
    assert.equal(pool.bytes, 0, 'scratch buffers are not the pool\'s to hand out');
  });
});
