import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CostTable, DraftLengthPolicy } from '../src/engine/draft-length.js';

/** A forward of T tokens per row costing 1 + 0.1 (T - 1) ms at batch 1, as a small model's does on a CPU. */
const costs = new CostTable([1, 2, 4, 8, 16, 32].map((perRow) => ({ batch: 1, perRow, ms: 1 + 0.1 * (perRow - 1) })));

/** A policy that has seen `n` drafts of `length` tokens, each keeping its first `kept`. */
function seen(length: number, kept: number, n = 200): DraftLengthPolicy {
  const p = new DraftLengthPolicy('auto');
  for (let i = 0; i < n; i++) p.observe(length, kept);
  return p;
}

describe('the auto draft length', () => {
  it('a fixed draft length is used as asked', () => {
    assert.equal(new DraftLengthPolicy(7).next(1, costs), 7);
  });

  it('drafts nothing (but probes now and then) where drafts are never kept', () => {
    const p = seen(4, 0);
    const lengths = Array.from({ length: 32 }, () => p.next(1, costs));
    assert.ok(lengths.filter((k) => k === 0).length >= 30, `mostly no draft: ${lengths.join(',')}`);
    assert.ok(lengths.some((k) => k > 0), 'a short probe now and then, so it can learn that drafts got better');
  });

  it('drafts deep where every drafted token is kept', () => {
    assert.ok(seen(16, 16).next(1, costs) >= 16);
  });

  it("counts the drafter's own cost per token: a dear drafter drafts shorter, a very dear one not at all", () => {
    const p = seen(16, 12);
    const free = p.next(1, costs, (k) => k, 0, 0);
    const dear = p.next(1, costs, (k) => k, 0, 0.3);
    const ruinous = p.next(1, costs, (k) => k, 0, 5);
    assert.ok(free > dear, `free drafter ${free} tokens, one at 0.3 ms a token ${dear}`);
    assert.ok(dear > 0, 'a drafter at a third of a forward per token still pays at this acceptance');
    assert.equal(ruinous, 0, 'a drafter costing 5 forwards per token never pays');
  });
});
