/**
 * Joint CTC/attention verification: a different target from greedy AR (the decoder and the CTC head score each
 * token together), reached by every drafter alike, and measured against the truth on real lines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Engine } from '../src/engine/engine.js';
import { EngineError } from '../src/engine/errors.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { realLines, type TestLine } from './helpers/eval-lines.js';

const PER_SET = 30;

describe('joint CTC/attention verification', () => {
  let engine: Engine;
  let lines: TestLine[];
  let joint: string[];
  let greedy: string[];

  before(async () => {
    engine = await Engine.open();
    lines = await realLines(engine, PER_SET);
    const crops = lines.map((l) => l.crop);
    joint = (await engine.readLines(crops, { decoding: { drafter: 'none', verifier: 'joint' } })).lines.map(
      (l) => l.text,
    );
    greedy = (await engine.readLines(crops, { decoding: { drafter: 'none', verifier: 'greedy' } })).lines.map(
      (l) => l.text,
    );
  });
  after(() => engine.close());

  const drafters = ['ctc', 'ngram', 'mtp', 'pmtp', 'diffusion'];
  for (const drafter of drafters) {
    it(`${drafter} + joint gives the text of joint decoding without a drafter, byte for byte`, async () => {
      const r = await engine.readLines(
        lines.map((l) => l.crop),
        { decoding: { drafter, verifier: 'joint', draftLength: 'auto' } },
      );
      const texts = r.lines.map((l) => l.text);
      const i = texts.findIndex((t, k) => t !== joint[k]);
      assert.equal(i, -1, i < 0 ? '' : `line ${i}: ${JSON.stringify(texts[i])} against ${JSON.stringify(joint[i])}`);
      assert.ok(r.metrics.draftTokens > 0, 'the drafter proposed tokens');
    });
  }

  it('makes no more character errors than greedy decoding on real lines', () => {
    const cer = (texts: string[]): number => corpusCer(texts.map((t, i) => tally(t, lines[i].truth)));
    assert.ok(cer(joint) <= cer(greedy), `joint ${cer(joint)}, greedy ${cer(greedy)}`);
  });

  it('a CTC weight of 0 is plain greedy decoding', async () => {
    const r = await engine.readLines(
      lines.map((l) => l.crop),
      { decoding: { drafter: 'ctc', verifier: 'joint', joint: { ctcWeight: 0 } } },
    );
    assert.deepEqual(
      r.lines.map((l) => l.text),
      greedy,
    );
  });

  it('a CTC weight outside 0..1 is refused with the valid range', () => {
    assert.throws(
      () => engine.resolve({ verifier: 'joint', joint: { ctcWeight: 1.5 } }),
      (e: unknown) => e instanceof EngineError && e.code === 'INVALID_OPTIONS' && /joint\.ctcWeight/.test(e.message),
    );
  });
});
