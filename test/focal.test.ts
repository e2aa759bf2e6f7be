import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { cropLines } from '../src/document/crop-lines.js';
import { decodeImage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
import { Engine } from '../src/engine/engine.js';
import { MIN_KEPT, nextSelection } from '../src/engine/focal.js';
import type { GrayCrop } from '../src/engine/preprocess.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

describe('focal pruning of visual tokens', () => {
  it('keeps the share asked for: the strongest fixations, then their neighbours, rightward first', () => {
    const indices = Array.from({ length: 100 }, (_, i) => i);
    const mass = indices.map((i) => (i === 40 ? 1 : i === 41 ? 0.5 : 0.001));
    const sel = nextSelection(indices, mass, 100, 0.1);
    assert.equal(sel.length, 10);
    assert.ok(sel.includes(40) && sel.includes(41), 'the fixations');
    assert.ok(sel.filter((i) => i > 41).length > sel.filter((i) => i < 40).length, 'more ahead of the eye than behind');
    assert.deepEqual(sel, [...sel].sort((a, b) => a - b));
    assert.equal(nextSelection(indices.slice(0, 8), mass.slice(0, 8), 8, 0.05).length, MIN_KEPT, `never fewer than ${MIN_KEPT}`);
    assert.equal(nextSelection(indices.slice(0, 4), mass.slice(0, 4), 4, 0.05).length, 4, "a line shorter than that keeps all");
  });

  describe('in the engine', () => {
    let engine: Engine;
    let crops: GrayCrop[];
    before(async () => {
      engine = await Engine.open();
      const page = await decodeImage(readFileSync(SAMPLE_PAGE), 'sample-page.png');
      crops = (await cropLines(page, findLines(page), engine.imageSpec)).slice(0, 6);
    });
    after(() => engine.close());

    it('keep 1 is plain decoding; a smaller keep attends to fewer visual tokens and says how many', async () => {
      const plain = await engine.readLines(crops);
      const all = await engine.readLines(crops, { decoding: { visualTokens: { keep: 1 } } });
      assert.deepEqual(all.lines.map((l) => l.text), plain.lines.map((l) => l.text));
      assert.equal(all.metrics.visualTokenRatio, 1);
      // A fixed draft length: the share attended counts each draft's full refresh step, and an `auto` length follows
      // the machine's measured forward cost (a table measured under load would move it).
      const pruned = await engine.readLines(crops, { decoding: { draftLength: 8, visualTokens: { keep: 0.2 } } });
      assert.ok(pruned.metrics.visualTokenRatio < 0.6 && pruned.metrics.visualTokenRatio >= 0.2, `ratio ${pruned.metrics.visualTokenRatio}`);
      assert.ok(pruned.lines.every((l) => l.text.length > 0), 'every line still read');
    });
  });
});
