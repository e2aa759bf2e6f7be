import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { cropLines } from '../src/document/crop-lines.js';
import { decodeImage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
import { Engine } from '../src/engine/engine.js';
import { EngineError } from '../src/engine/errors.js';
import { resolveDecoding } from '../src/engine/strategies/options.js';
import { JOINT_CTC_WEIGHT } from '../src/engine/strategies/registry.js';
import type { GrayCrop } from '../src/engine/vision/preprocess.js';
import { RelaxedVerifier } from '../src/engine/strategies/verifiers/relaxed.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

describe('decoding options are validated per request', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  const refused = (input: unknown, pattern: RegExp) => {
    assert.throws(
      () => engine.resolve(input as never),
      (e: unknown) => {
        assert.ok(e instanceof EngineError);
        assert.equal(e.code, 'INVALID_OPTIONS');
        assert.match(e.message, pattern);
        return true;
      },
    );
  };

  it('an unknown drafter is refused with the list of drafters', () =>
    refused(
      { drafter: 'medusa' },
      /unknown drafter "medusa"; the drafters are "none", "ctc", "ngram", "reference", "mtp"/,
    ));
  it('an unknown verifier is refused with the list of verifiers', () =>
    refused({ verifier: 'typical' }, /the verifiers are "greedy", "tree", "relaxed"/));
  it('a drafter whose head the bundle lacks is refused, naming the drafters it can use', () => {
    // The shipped bundle has every head: the same bundle as one exported without the diffusion training.
    const config = { ...engine.bundle.config, heads: { ...engine.bundle.config.heads, diffusion: false } };
    assert.throws(
      () => resolveDecoding({ drafter: 'dual-diffusion' }, config),
      (e: unknown) => {
        assert.ok(e instanceof EngineError);
        assert.equal(e.code, 'INVALID_OPTIONS');
        assert.match(
          e.message,
          /needs the model's diffusion head.*the drafters are "none", "ctc", "ngram", "reference", "mtp", "pmtp", /,
        );
        assert.ok(e.message.endsWith('"routed"'), e.message);
        return true;
      },
    );
  });
  it('the reference drafter without a reference says what to send', () =>
    refused({ drafter: 'reference' }, /decoding.reference/));
  it('a draft length outside 1..32 is refused', () => {
    refused({ draftLength: 0 }, /draftLength/);
    refused({ draftLength: 99 }, /draftLength/);
    refused({ draftLength: 'many' }, /draftLength/);
  });
  it('a visual keep ratio outside its range is refused, naming the range', () =>
    refused({ visualTokens: { keep: 0 } }, /visualTokens.keep/));
  it('relaxed verification without a drafter is refused', () =>
    refused({ drafter: 'none', verifier: 'relaxed' }, /nothing to relax/));
  it('unknown option keys are refused, not ignored', () =>
    refused({ drafter: 'ctc', lenght: 3 }, /lenght|Unrecognized/));
  it('defaults are ctc drafting, verified jointly with the CTC head, with auto draft length', () => {
    const name = engine.bundle.config.name;
    assert.deepEqual(engine.resolve(undefined), {
      drafter: 'ctc',
      verifier: 'joint',
      draftLength: 'auto',
      params: { relaxed: { topK: 5, minRatio: 0.3 }, joint: { ctcWeight: JOINT_CTC_WEIGHT } },
      visualTokens: { keep: 1 },
      for: { bundle: name, regions: false },
    });
  });
  it('options resolved once (as a job stores them) are used as they are, and resolved again for another bundle', () => {
    const once = engine.resolve({ drafter: 'ngram', verifier: 'relaxed', relaxed: { topK: 3 } });
    assert.equal(engine.resolve(once), once, 'the same record: not resolved again');
    assert.equal(
      engine.resolve(JSON.parse(JSON.stringify(once))).params.relaxed.topK,
      3,
      'as read back from a job store',
    );
    const other = { ...engine.bundle.config, name: 'another-bundle' };
    const again = resolveDecoding(once, other);
    assert.notEqual(again, once);
    assert.deepEqual([again.for.bundle, again.drafter, again.params.relaxed.topK], ['another-bundle', 'ngram', 3]);
    const noCtc = { ...other, heads: { ...other.heads, ctc: false } };
    assert.throws(
      () => resolveDecoding(engine.resolve({ drafter: 'none', verifier: 'joint' }), noCtc),
      /verifier "joint" scores with the model's CTC head/,
    );
  });
  it('the relaxed verifier says it is lossy', () => {
    assert.equal(new RelaxedVerifier({ topK: 5, minRatio: 0.3 }).lossless, false);
  });
});

describe('speculation metrics and cancellation', () => {
  let engine: Engine;
  let crops: GrayCrop[];
  before(async () => {
    engine = await Engine.open();
    const page = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
    crops = await cropLines(page, findLines(page), engine.imageSpec);
  });
  after(() => engine.close());

  it('plain decoding commits exactly one token per line per forward and drafts nothing', async () => {
    const { metrics } = await engine.readLines(crops, { decoding: { drafter: 'none' } });
    assert.equal(metrics.meanAcceptanceLength, 1);
    assert.equal(metrics.drafts, 0);
    assert.equal(metrics.draftTokens, 0);
    assert.deepEqual(metrics.acceptanceByPosition, []);
    assert.ok(metrics.forwards > 0 && metrics.decodeMs > 0);
  });

  it('drafted decoding counts drafts, accepted tokens and acceptance by position consistently', async () => {
    const { metrics: m } = await engine.readLines(crops, { decoding: { drafter: 'ctc', draftLength: 4 } });
    assert.ok(m.drafts > 0 && m.draftTokens >= m.drafts);
    assert.ok(m.acceptedTokens <= m.draftTokens);
    assert.equal(
      m.committedTokens,
      m.acceptedTokens + m.sequenceForwards,
      'each line-forward commits its accepted tokens plus one',
    );
    assert.ok(m.acceptanceByPosition.length <= 4);
    for (const a of m.acceptanceByPosition) assert.ok(a >= 0 && a <= 1);
  });

  it('tokens stream as they are decided, marked by where they came from', async () => {
    const streamed = new Map<number, string>();
    let drafted = 0;
    const { lines, metrics } = await engine.readLines(crops.slice(0, 4), {
      decoding: { drafter: 'ctc', draftLength: 6 },
      onTokens: (i, text, fromDraft) => {
        streamed.set(i, (streamed.get(i) ?? '') + text);
        drafted += fromDraft.filter(Boolean).length;
      },
    });
    lines.forEach((l, i) => assert.equal(streamed.get(i) ?? '', l.text));
    // Every accepted draft token is streamed as drafted, except an accepted end-of-line (at most one a line).
    assert.ok(drafted > 0, 'some streamed tokens came from accepted drafts');
    assert.ok(drafted <= metrics.acceptedTokens && metrics.acceptedTokens - drafted <= lines.length);
  });

  it("a request whose token callback throws fails alone; the other request's lines are untouched", async () => {
    const boom = new Error('client went away');
    const [bad, good] = await Promise.allSettled([
      engine.readLines(crops.slice(0, 4), {
        onTokens: () => {
          throw boom;
        },
      }),
      engine.readLines(crops.slice(4, 8)),
    ]);
    assert.equal(bad.status, 'rejected');
    assert.equal(bad.status === 'rejected' ? bad.reason : null, boom);
    assert.equal(good.status, 'fulfilled');
    const alone = await engine.readLines(crops.slice(4, 8));
    assert.deepEqual(
      good.status === 'fulfilled' ? good.value.lines.map((l) => l.text) : [],
      alone.lines.map((l) => l.text),
    );
  });

  it('a cancelled request stops with CANCELLED and the engine serves the next one', async () => {
    const ctrl = new AbortController();
    const pending = engine.readLines(crops, { signal: ctrl.signal, onTokens: () => ctrl.abort() });
    await assert.rejects(pending, (e: unknown) => e instanceof EngineError && e.code === 'CANCELLED');
    const again = await engine.readLines(crops.slice(0, 2));
    assert.equal(again.lines.length, 2);
  });
});
