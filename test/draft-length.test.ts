import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CostTable, DraftLengthPolicy, MAX_DRAFT_LENGTH, planDepths } from '../src/engine/strategies/draft-length.js';
import { monotone } from '../src/engine/decode/calibrate.js';

/** A forward of T tokens per row costing 1 + 0.1 (T - 1) ms at batch 1, as a small model's does on a CPU. */
const costs = new CostTable([1, 2, 4, 8, 16, 32].map((perRow) => ({ batch: 1, perRow, ms: 1 + 0.1 * (perRow - 1) })));

/** A policy that has seen `n` drafts of `length` tokens, each keeping its first `kept`. */
function seen(length: number, kept: number, n = 200): DraftLengthPolicy {
  const p = new DraftLengthPolicy('auto');
  for (let i = 0; i < n; i++) p.observe(length, kept);
  return p;
}

/** One row alone in its forward, as the step's plan sizes it: its depth, or a probe where no depth pays. */
function alone(p: DraftLengthPolicy, draftMsPerToken = 0): number {
  return planDepths([p.outlook(MAX_DRAFT_LENGTH, undefined, (k) => k, draftMsPerToken)], 1, costs)[0] || p.probe();
}

describe('the auto draft length', () => {
  it('drafts nothing (but probes now and then) where drafts are never kept', () => {
    const p = seen(4, 0);
    const lengths = Array.from({ length: 32 }, () => alone(p));
    assert.ok(lengths.filter((k) => k === 0).length >= 30, `mostly no draft: ${lengths.join(',')}`);
    assert.ok(
      lengths.some((k) => k > 0),
      'a short probe now and then, so it can learn that drafts got better',
    );
  });

  it('drafts deep where every drafted token is kept', () => {
    assert.ok(alone(seen(16, 16)) >= 16);
  });

  it("counts the drafter's own cost per token: a dear drafter drafts shorter, a very dear one not at all", () => {
    const p = seen(16, 12);
    const free = planDepths([p.outlook(MAX_DRAFT_LENGTH, undefined, (k) => k, 0)], 1, costs)[0];
    const dear = planDepths([p.outlook(MAX_DRAFT_LENGTH, undefined, (k) => k, 0.3)], 1, costs)[0];
    const ruinous = planDepths([p.outlook(MAX_DRAFT_LENGTH, undefined, (k) => k, 5)], 1, costs)[0];
    assert.ok(free > dear, `free drafter ${free} tokens, one at 0.3 ms a token ${dear}`);
    assert.ok(dear > 0, 'a drafter at a third of a forward per token still pays at this acceptance');
    assert.equal(ruinous, 0, 'a drafter costing 5 forwards per token never pays');
  });
});

describe('the width of a forward under auto draft lengths', () => {
  /** A policy that has seen drafts whose tokens were kept exactly where the drafter gave them probability >= 0.99. */
  function learnt(): DraftLengthPolicy {
    const p = new DraftLengthPolicy('auto');
    for (let i = 0; i < 100; i++) {
      p.observe(8, 8, Array<number>(8).fill(0.9999));
      p.observe(4, 0, Array<number>(4).fill(0.4));
    }
    return p;
  }

  it("learns acceptance per band of the drafter's own confidence", () => {
    const p = learnt();
    assert.ok(p.rateFor(0.9999) > 0.95, `sure tokens kept: ${p.rateFor(0.9999)}`);
    assert.ok(p.rateFor(0.4) < 0.1, `unsure tokens refused: ${p.rateFor(0.4)}`);
  });

  it('a line the drafter is sure of widens the forward, and every row drafts as deep as the width holds', () => {
    const p = learnt();
    const sure = p.outlook(40, Array<number>(40).fill(0.9999), (k) => k, 0);
    const unsure = p.outlook(40, Array<number>(40).fill(0.4), (k) => k, 0);
    const depths = planDepths([sure, unsure, unsure], 3, costs);
    assert.ok(depths[0] >= 16, `the sure row drafts deep: ${depths.join(',')}`);
    assert.deepEqual(
      depths.slice(1),
      [depths[0], depths[0]],
      'padding costs what drafting does: the unsure rows fill the width too',
    );
  });

  it('a forward of rows the drafter is unsure of stays narrow', () => {
    const p = learnt();
    const unsure = p.outlook(40, Array<number>(40).fill(0.4), (k) => k, 0);
    assert.deepEqual(planDepths([unsure, unsure], 2, costs), [0, 0]);
  });

  it(
    'a row drafts no further than its drafter has tokens, nor past a ' + 'fixed-length row it shares the forward with',
    () => {
      const p = learnt();
      const short = p.outlook(40, Array<number>(3).fill(0.9999), (k) => k, 0);
      const unsure = p.outlook(40, Array<number>(40).fill(0.4), (k) => k, 0);
      assert.deepEqual(planDepths([short], 1, costs), [3], 'the whole of what is left to draft');
      // A row of fixed length 12 already makes the forward 13 wide: an unsure row drafts into that width for free.
      assert.deepEqual(planDepths([unsure], 2, costs, 0, 13), [12]);
    },
  );
});

describe('the measured forward costs', () => {
  it('never say a forward carrying more tokens per row costs less (a noisy dip is averaged out)', () => {
    const measured = [
      { batch: 8, perRow: 1, ms: 1.5 },
      { batch: 8, perRow: 2, ms: 2.5 },
      { batch: 8, perRow: 4, ms: 3.7 },
      { batch: 8, perRow: 8, ms: 3.5 },
      { batch: 8, perRow: 16, ms: 7.4 },
      { batch: 1, perRow: 1, ms: 0.6 },
      { batch: 1, perRow: 2, ms: 0.5 },
    ];
    const table = monotone(measured);
    for (const batch of [1, 8]) {
      const ms = table
        .filter((p) => p.batch === batch)
        .sort((a, b) => a.perRow - b.perRow)
        .map((p) => p.ms);
      for (let i = 1; i < ms.length; i++) assert.ok(ms[i] >= ms[i - 1], `batch ${batch}: ${ms.join(', ')}`);
    }
    const at = (batch: number, perRow: number): number =>
      table.find((p) => p.batch === batch && p.perRow === perRow)?.ms ?? NaN;
    assert.equal(at(8, 4), 3.6, 'the dip and the point before it meet at their mean');
    assert.equal(at(8, 8), 3.6);
    assert.equal(at(8, 16), 7.4, 'points in order are kept as measured');
    assert.equal(at(1, 1), 0.55);
  });
});
