/**
 * The lossless property: every lossless drafter/verifier pairing gives byte-identical text to plain greedy
 * decoding (the simple reference loop in greedy.ts, not the scheduler), on real lines and on adversarial drafts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeBundle, loadBundle, type Bundle } from '../src/engine/bundle/bundle.js';
import { DraftingContext } from '../src/engine/strategies/drafting-context.js';
import type { Drafter } from '../src/engine/strategies/drafters/drafter.js';
import { Engine } from '../src/engine/engine.js';
import { decodeGreedy } from '../src/engine/decode/greedy.js';
import { SpecMetrics } from '../src/engine/decode/metrics.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import { Scheduler } from '../src/engine/decode/scheduler.js';
import { GreedyVerifier } from '../src/engine/strategies/verifiers/greedy.js';
import { TreeVerifier } from '../src/engine/strategies/verifiers/tree.js';
import type { Verifier } from '../src/engine/strategies/verifiers/verifier.js';
import { runVision } from '../src/engine/vision/visual-state.js';
import { EmptyDrafter, MalformedTreeDrafter, OverlongDrafter, RandomDrafter } from './helpers/adversarial-drafters.js';
import { EVAL_DIR, realLines, type TestLine } from './helpers/eval-lines.js';

const PER_SET = Number(process.env.SPECULA_LOSSLESS_PER_SET ?? 100); // 3 sets: 300 lines

async function plainGreedy(bundle: Bundle, lines: TestLine[]): Promise<string[]> {
  const out: string[] = [];
  for (let s = 0; s < lines.length; s += 32) {
    const group = lines.slice(s, s + 32);
    const vis = await runVision(bundle, { crops: group.map((l) => l.crop) });
    const res = await decodeGreedy(bundle, vis);
    out.push(...res.ids.map((ids) => bundle.tokenizer.decode(ids)));
  }
  return out;
}

function firstDifference(got: string[], want: string[]): string {
  const i = got.findIndex((g, k) => g !== want[k]);
  return i < 0 ? '' : `line ${i}: got ${JSON.stringify(got[i])}, greedy gave ${JSON.stringify(want[i])}`;
}

describe('lossless drafters match greedy AR on real lines', () => {
  let engine: Engine;
  let lines: TestLine[];
  let greedy: string[];
  // A reference text as a PDF layer would give it: the page's true lines, joined as one document.
  let rightReference: string;
  // Another document's text: drafts from it are wrong nearly everywhere.
  let otherReference: string;

  before(async () => {
    // Every line whole, as the reference loop reads it: lines read in pieces are held to the property in
    // wide-lines.test.ts.
    engine = await Engine.open(undefined, { readChars: null });
    lines = await realLines(engine, PER_SET);
    greedy = await plainGreedy(engine.bundle, lines);
    rightReference = lines.map((l) => l.truth).join('\n');
    otherReference = [...lines]
      .reverse()
      .map((l) => l.truth.split(' ').reverse().join(' '))
      .join('\n');
  });
  after(() => engine.close());

  it('runs on at least 300 real lines (the evaluation set; without it, the sample page, and says so)', (t) => {
    if (lines[0]?.set === 'sample-page') {
      t.diagnostic(`no evaluation set at ${EVAL_DIR}: ${lines.length} lines of the sample page`);
      assert.ok(lines.length > 0);
      return;
    }
    assert.ok(lines.length >= Math.min(300, PER_SET * 3), `${lines.length} lines`);
  });

  const pairings: [string, DecodingOptionsInput][] = [
    ['none + greedy', { drafter: 'none', verifier: 'greedy' }],
    ['none + tree', { drafter: 'none', verifier: 'tree' }],
    ['ctc + greedy, 8 tokens', { drafter: 'ctc', verifier: 'greedy', draftLength: 8 }],
    ['ctc + greedy, auto', { drafter: 'ctc', verifier: 'greedy', draftLength: 'auto' }],
    ['ctc + tree, 8 tokens', { drafter: 'ctc', verifier: 'tree', draftLength: 8 }],
    ['ngram + greedy, 6 tokens', { drafter: 'ngram', verifier: 'greedy', draftLength: 6 }],
    ['ngram + tree, auto', { drafter: 'ngram', verifier: 'tree', draftLength: 'auto' }],
    ['mtp + greedy, 3 tokens', { drafter: 'mtp', verifier: 'greedy', draftLength: 3 }],
    ['mtp + tree, auto', { drafter: 'mtp', verifier: 'tree', draftLength: 'auto' }],
    ['pmtp + greedy, 6 tokens', { drafter: 'pmtp', verifier: 'greedy', draftLength: 6 }],
    ['pmtp + tree, auto', { drafter: 'pmtp', verifier: 'tree', draftLength: 'auto' }],
    ['diffusion + greedy, 8 tokens', { drafter: 'diffusion', verifier: 'greedy', draftLength: 8 }],
    ['diffusion + tree, auto', { drafter: 'diffusion', verifier: 'tree', draftLength: 'auto' }],
    ['dual-diffusion + tree, 8 tokens', { drafter: 'dual-diffusion', verifier: 'tree', draftLength: 8 }],
    ['dual-diffusion + greedy, 12 tokens', { drafter: 'dual-diffusion', verifier: 'greedy', draftLength: 12 }],
  ];
  for (const [name, decoding] of pairings) {
    it(`${name} gives greedy's text byte for byte`, async () => {
      const r = await engine.readLines(
        lines.map((l) => l.crop),
        { decoding },
      );
      const texts = r.lines.map((l) => l.text);
      assert.deepEqual(texts, greedy, firstDifference(texts, greedy));
      if (decoding.drafter === 'none') {
        assert.equal(r.metrics.meanAcceptanceLength, 1);
        assert.equal(r.metrics.draftTokens, 0);
      } else {
        assert.ok(r.metrics.draftTokens > 0, 'the drafter proposed tokens: the pairing was really exercised');
      }
      if (['ctc', 'mtp', 'pmtp', 'diffusion', 'dual-diffusion'].includes(decoding.drafter ?? ''))
        assert.ok(r.metrics.acceptedTokens > 0, 'some drafted tokens are accepted');
    });
  }

  it("reference + greedy and + tree, with the right reference, give greedy's text", async () => {
    for (const verifier of ['greedy', 'tree']) {
      const r = await engine.readLines(
        lines.map((l) => l.crop),
        { decoding: { drafter: 'reference', verifier, draftLength: 12, reference: rightReference } },
      );
      const texts = r.lines.map((l) => l.text);
      assert.deepEqual(texts, greedy, firstDifference(texts, greedy));
      assert.ok(
        r.metrics.draftTokens > 0 && r.metrics.acceptedTokens > 0,
        'the reference was drafted from and drafts were accepted',
      );
    }
  });

  it('a reference from another document costs speed, never text', async () => {
    const r = await engine.readLines(
      lines.map((l) => l.crop),
      { decoding: { drafter: 'reference', verifier: 'greedy', draftLength: 12, reference: otherReference } },
    );
    const texts = r.lines.map((l) => l.text);
    assert.deepEqual(texts, greedy, firstDifference(texts, greedy));
    assert.ok(r.metrics.draftTokens > 0, 'the wrong reference was drafted from');
  });

  it('lines of requests with different strategies share forwards and keep their own text', async () => {
    const some = lines.slice(0, 48).map((l) => l.crop);
    // The plain-AR request is sent first and is the long one (one token a forward), so the speculative request's
    // short vision pass, queued behind its, lands while it still decodes. Half and half the other way round, the
    // speculative half once finished its 83 forwards before the AR half's vision pass had landed (a slow host).
    const few = Math.max(1, Math.floor(some.length / 6));
    const before = engine.stats.forwards;
    const [ar, spec] = await Promise.all([
      engine.readLines(some.slice(few), { decoding: { drafter: 'none', verifier: 'greedy' } }),
      engine.readLines(some.slice(0, few), { decoding: { drafter: 'ctc', verifier: 'tree', draftLength: 6 } }),
    ]);
    const shared = engine.stats.forwards - before;
    assert.deepEqual(
      [...spec.lines, ...ar.lines].map((l) => l.text),
      greedy.slice(0, some.length),
    );
    assert.ok(spec.metrics.draftTokens > 0, 'the speculative request drafted');
    assert.ok(
      shared < spec.metrics.forwards + ar.metrics.forwards,
      `the two requests shared forwards (${shared} run, ` +
        `${spec.metrics.forwards} + ${ar.metrics.forwards} taken part in)`,
    );
  });

  it('a request that arrives mid-decode joins the running batch and both keep their text', async () => {
    const some = lines.slice(0, 40).map((l) => l.crop);
    // The newcomer joins once its vision pass lands (it runs beside the decoding, on the same cores): the running
    // request is many lines read by plain AR, one token a forward, and the newcomer one or two lines whose vision
    // pass is short, so it lands while the first is still decoding even on a loaded machine (with a quarter of the
    // lines, ten, it once landed after the first request's last forward).
    // fewer lines when ../shared/eval is absent
    const half = some.length - Math.min(2, Math.max(1, Math.floor(some.length / 4)));
    // The newcomer's `auto` draft length needs the forward-cost table: measure it first, or the newcomer would
    // wait for it while the first request finishes.
    await engine.readLines(some.slice(0, 1), { decoding: { drafter: 'ngram', verifier: 'tree', draftLength: 'auto' } });
    const before = engine.stats.forwards;
    let joined: Promise<Awaited<ReturnType<Engine['readLines']>>> | null = null;
    const first = engine.readLines(some.slice(0, half), {
      decoding: { drafter: 'none', verifier: 'greedy' },
      onTokens: () => {
        // The first committed tokens: the batch is running; the second request joins it now.
        joined ??= engine.readLines(some.slice(half), {
          decoding: { drafter: 'ngram', verifier: 'tree', draftLength: 'auto' },
        });
      },
    });
    const a = await first;
    assert.ok(joined, 'the second request was sent while the first was decoding');
    const b = await (joined as Promise<Awaited<ReturnType<Engine['readLines']>>>);
    const ran = engine.stats.forwards - before;
    assert.deepEqual(
      [...a.lines, ...b.lines].map((l) => l.text),
      greedy.slice(0, some.length),
    );
    assert.ok(
      ran < a.metrics.forwards + b.metrics.forwards,
      `forwards were shared (${ran} run, ${a.metrics.forwards} + ${b.metrics.forwards} taken part in)`,
    );
  });
});

describe('adversarial drafts cost speed, never text', () => {
  let bundle: Bundle;
  let lines: TestLine[];
  let greedy: string[];

  before(async () => {
    bundle = await loadBundle();
    const engine = await Engine.open();
    lines = (await realLines(engine, Math.ceil(PER_SET / 3))).slice(0, 100);
    await engine.close();
    greedy = await plainGreedy(bundle, lines);
  });
  after(() => closeBundle(bundle));

  async function decodeWith(
    drafter: Drafter,
    verifier: Verifier,
    draftLength: number,
  ): Promise<{ texts: string[]; metrics: SpecMetrics }> {
    const scheduler = new Scheduler(bundle, { maxBatch: 32 });
    const context = new DraftingContext(bundle.tokenizer);
    const metrics = new SpecMetrics();
    const outs = await Promise.all(
      lines.map((l) => scheduler.read({ crops: [l.crop], drafter, verifier, draftLength, context, metrics })),
    );
    return { texts: outs.map((o) => bundle.tokenizer.decode(o.ids)), metrics };
  }

  const vocab = (): number => bundle.config.dims.vocabSize;
  const cases: [string, () => Drafter, () => Verifier, number][] = [
    ['random chains, greedy verifier', () => new RandomDrafter(vocab(), 1), () => new GreedyVerifier(), 8],
    ['random trees, tree verifier', () => new RandomDrafter(vocab(), 2, true), () => new TreeVerifier(), 6],
    [
      'malformed trees (parents ahead of children, out of range), tree verifier',
      () => new MalformedTreeDrafter(vocab()),
      () => new TreeVerifier(),
      6,
    ],
    ['empty drafts', () => new EmptyDrafter(), () => new GreedyVerifier(), 8],
    [
      'drafts running far past the line end',
      () => new OverlongDrafter(vocab(), bundle.config.specialIds.eos),
      () => new GreedyVerifier(),
      32,
    ],
  ];
  for (const [name, drafter, verifier, k] of cases) {
    it(name, async () => {
      const d = drafter();
      const { texts, metrics } = await decodeWith(d, verifier(), k);
      assert.deepEqual(texts, greedy, firstDifference(texts, greedy));
      const drafted = metrics.snapshot().draftTokens;
      if (d instanceof EmptyDrafter) assert.equal(drafted, 0);
      else assert.ok(drafted > 0, 'the junk drafts reached the verifier');
    });
  }
});
