/**
 * Drafter and verifier logic against a scripted model: the "model" here is a fixed target text whose next
 * character is always the argmax, so these tests pin down re-anchoring and tree walking exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DraftingContext } from '../src/engine/strategies/drafting-context.js';
import { depths, type Draft, type ForwardView, leavesOf, type RowLogits } from '../src/engine/strategies/draft.js';
import { CtcDrafter } from '../src/engine/strategies/drafters/ctc.js';
import { DiffusionDrafter } from '../src/engine/strategies/drafters/diffusion.js';
import { type Drafter, type SequenceView, trieOf } from '../src/engine/strategies/drafters/drafter.js';
import { TokenIndex } from '../src/engine/strategies/drafters/lookup.js';
import { Tokenizer } from '../src/engine/bundle/tokenizer.js';
import { GreedyVerifier } from '../src/engine/strategies/verifiers/greedy.js';
import { RelaxedVerifier } from '../src/engine/strategies/verifiers/relaxed.js';
import { TreeVerifier } from '../src/engine/strategies/verifiers/tree.js';
import type { Verifier } from '../src/engine/strategies/verifiers/verifier.js';

const VOCAB = [
  '<pad>',
  '<bos>',
  '<eos>',
  '<mask>',
  '<unk>',
  ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)),
];
const tok = new Tokenizer(VOCAB, { pad: 0, bos: 1, eos: 2, mask: 3, unk: 4, ctcBlank: 0 });
const EOS = 2;

/**
 * Logits for a row whose model would write `target`: after `prefix` (+ path through the draft), argmax is the next
 * char.
 */
function scriptedLogits(target: number[], committed: number, draft: Draft, grounded = false): RowLogits {
  const parents = draft.parents ?? draft.tokens.map((_, i) => i - 1);
  const pathOf = (i: number): number[] => {
    const p: number[] = [];
    for (let k = i; k >= 0; k = parents[k]) p.unshift(draft.tokens[k]);
    return p;
  };
  return {
    at(i: number): Float32Array {
      const x = new Float32Array(VOCAB.length);
      const path = i === 0 ? [] : pathOf(i - 1);
      const onTrack = path.every((t, k) => target[committed + k] === t);
      // Off the track, a model that reads the image (grounded) still says what the line holds next there.
      const next = onTrack || grounded ? (target[committed + path.length] ?? EOS) : 5;
      x[next] = 10;
      return x;
    },
  };
}

/** A line's mask blocks as a model that reads the image fills them: what the line holds at each position. */
type BlockModel = (index: number, slot: number) => Float32Array;

function reads(target: number[], wrongAt = new Set<number>()): BlockModel {
  return (index) => {
    const x = new Float32Array(VOCAB.length);
    const right = target[index] ?? EOS;
    if (wrongAt.has(index)) {
      x[6] = 5; // a confident-looking wrong character, the right one a close second
      x[right] = 4.6;
    } else {
      x[right] = 10;
    }
    return x;
  };
}

/**
 * The forward as a diffusion drafter reads it back: each block (after the fed token and each leaf, and a
 * shorter one after each inner token with lookaheadInner) holds the positions after its bonus.
 */
function scriptedForward(logits: RowLogits, committed: number, draft: Draft, blocks: BlockModel): ForwardView {
  const depth = depths(draft);
  const leaves = leavesOf(draft);
  return {
    after: (node) => logits.at(node + 1),
    lookahead: (node) => {
      const size =
        node === -1 || leaves.includes(node)
          ? (draft.lookahead ?? 0)
          : Math.min(draft.lookahead ?? 0, draft.lookaheadInner ?? 0);
      const base = committed + (node < 0 ? 0 : depth[node]) + 1;
      return Array.from({ length: size }, (_, k) => blocks(base + k, k));
    },
  };
}

function run(
  drafter: Drafter,
  verifier: Verifier,
  target: string,
  ctc: string,
  budget = 8,
  blocks?: BlockModel,
): { text: string; forwards: number } {
  const t = tok.encode(target);
  const seq = {
    id: 1,
    tokens: [] as number[],
    ctc: tok.encode(ctc),
    ctcFrames: Array.from(ctc, (_, i) => 3 * i),
    ctcProbs: Array.from(ctc, () => 0.99),
    context: new DraftingContext(tok),
    budget,
    tree: verifier.trees,
    hidden: null,
    attention: null,
    position: 0,
    lastLayerVisual: () => {
      throw new Error('these drafters do not look at the line');
    },
  };
  let forwards = 0;
  for (;;) {
    const proposed = drafter.propose([seq as SequenceView]);
    if (proposed instanceof Promise) throw new Error('a synchronous drafter was expected');
    const draft = proposed[0];
    const logits = scriptedLogits(t, seq.tokens.length, draft, blocks !== undefined);
    const verdict = verifier.verify(draft, logits, {
      id: 0,
      ctc: () => {
        throw new Error('these verifiers do not read the CTC head');
      },
    });
    forwards++;
    const committed = [...verdict.accepted.map((i) => draft.tokens[i]), verdict.bonus];
    drafter.observe?.(
      seq as SequenceView,
      draft,
      verdict,
      committed,
      scriptedForward(logits, seq.tokens.length, draft, blocks ?? reads(t)),
    );
    const end = committed.indexOf(EOS);
    seq.tokens.push(...(end < 0 ? committed : committed.slice(0, end)));
    if (end >= 0 || forwards > 200) break;
  }
  return { text: tok.decode(seq.tokens), forwards };
}

describe("the ctc drafter re-anchors on the verifier's correction", () => {
  const target = 'the quick brown fox jumps over the lazy dog';
  it('a perfect reading is committed in ceil((n+1)/(k+1)) forwards', () => {
    const r = run(new CtcDrafter(EOS), new GreedyVerifier(), target, target, 8);
    assert.equal(r.text, target);
    assert.equal(r.forwards, Math.ceil((target.length + 1) / 9));
  });
  for (const [kind, reading] of [
    ['a wrong character', 'the quick brawn fox jumps over the lazy dog'],
    ['an extra character', 'the quick broown fox jumps over the lazy dog'],
    ['a missing character', 'the quick brwn fox jumps over the lazy dog'],
  ]) {
    it(`after ${kind}, drafts are accepted again (chain and tree)`, () => {
      const perfect = run(new CtcDrafter(EOS), new GreedyVerifier(), target, target, 8).forwards;
      for (const verifier of [new GreedyVerifier(), new TreeVerifier()]) {
        const r = run(new CtcDrafter(EOS), verifier, target, reading, 8);
        assert.equal(r.text, target);
        assert.ok(
          r.forwards <= perfect + 3,
          `${verifier.name}: ${r.forwards} forwards, a perfect reading takes ${perfect}`,
        );
      }
    });
  }
  it('after the model skips several characters the reading holds, the drafter re-anchors on the suffix', () => {
    // The model (the target) read "tevision" where the reading has "television": no one-character hypothesis
    // explains it, and an anchor that only steps along would trail the model to the end of the line.
    const skipped = 'for research, tevision, education, medicine, and law';
    const reading = 'for research, television, education, medicine, and law';
    const perfect = run(new CtcDrafter(EOS), new GreedyVerifier(), skipped, skipped, 8).forwards;
    const r = run(new CtcDrafter(EOS), new GreedyVerifier(), skipped, reading, 8);
    assert.equal(r.text, skipped);
    assert.ok(r.forwards <= perfect + 3, `${r.forwards} forwards, a perfect reading takes ${perfect}`);
  });
  it('the tree verifier recovers from a missing character at least as fast as the chain', () => {
    const reading = 'the quick brwn fox jumps over the lazy dog';
    const chain = run(new CtcDrafter(EOS), new GreedyVerifier(), target, reading, 8).forwards;
    const tree = run(new CtcDrafter(EOS), new TreeVerifier(), target, reading, 8).forwards;
    assert.ok(tree <= chain, `tree ${tree}, chain ${chain}`);
  });
  it('an unrelated reading still gives the right text', () => {
    const r = run(new CtcDrafter(EOS), new TreeVerifier(), target, 'zzzz qqqq', 8);
    assert.equal(r.text, target);
  });
  it('where the reading reads a run of leader dots short, the draft continues the run', () => {
    // The CTC head cannot emit a character on adjacent frames: it reads "......" short, or as other letters.
    const leader = `Contents ${'.'.repeat(40)} 8`;
    const pairs = `Index ${'. '.repeat(20)}12`;
    for (const [line, reading] of [
      [leader, 'Contents ....tttt.t. 8'],
      [pairs, 'Index . . ..tt 12'],
    ]) {
      const chain = run(new CtcDrafter(EOS), new GreedyVerifier(), line, reading, 8);
      assert.equal(chain.text, line);
      assert.ok(
        chain.forwards <= 12,
        `"${line}": ${chain.forwards} forwards (a token a forward would be ${line.length - 12})`,
      );
      // A tree keeps several places in the reading, which part-match a run of pairs: it may not need the run.
      assert.equal(run(new CtcDrafter(EOS), new TreeVerifier(), line, reading, 8).text, line);
    }
  });
});

describe('the diffusion drafters draft the next block in the verifying forward', () => {
  const target = 'the quick brown fox jumps over the lazy dog';
  const t = tok.encode(target);
  // The first forward has nothing to verify (it only drafts); then each kept block and its bonus.
  const perfect = 1 + Math.ceil(target.length / 9);
  it('with blocks the model fills right, every forward after the first commits k + 1 tokens', () => {
    const r = run(new DiffusionDrafter(EOS), new GreedyVerifier(), target, '', 8, reads(t));
    assert.equal(r.text, target);
    assert.equal(r.forwards, perfect);
  });
  it('after a wrong character in a block, drafting goes on past the correction', () => {
    const wrong = reads(t, new Set([12]));
    // The block after the last kept token is short (two slots): one short draft, then full blocks again.
    const r = run(new DiffusionDrafter(EOS), new GreedyVerifier(), target, '', 8, wrong);
    assert.equal(r.text, target);
    assert.equal(r.forwards, perfect + 2, `${r.forwards} forwards`);
    // With blocks after the leaf only, the fed token's block drafts on from the slot past the kept tokens.
    const leafOnly = run(new DiffusionDrafter(EOS, { inner: 0 }), new GreedyVerifier(), target, '', 8, wrong);
    assert.equal(leafOnly.text, target);
    assert.equal(leafOnly.forwards, perfect + 1, `${leafOnly.forwards} forwards`);
  });
  it('after a rejection, the next draft starts at slot 0 of a block that saw exactly the kept text', () => {
    // A model whose blocks are right only in their first slot (as trained blocks are most reliable there): a
    // draft keeps its first token and is rejected at its second, so each forward commits two tokens. Drafting
    // on from a deeper slot of an older block would draft a wrong first token every other forward.
    const wrongAfterFirst: BlockModel = (index, slot) => reads(t, slot > 0 ? new Set([index]) : new Set())(index, slot);
    const r = run(new DiffusionDrafter(EOS), new GreedyVerifier(), target, '', 8, wrongAfterFirst);
    assert.equal(r.text, target);
    assert.equal(r.forwards, 1 + Math.ceil(target.length / 2), `${r.forwards} forwards`);
    const leafOnly = run(new DiffusionDrafter(EOS, { inner: 0 }), new GreedyVerifier(), target, '', 8, wrongAfterFirst);
    assert.ok(leafOnly.forwards > r.forwards, `blocks after the leaf only: ${leafOnly.forwards} forwards`);
  });
  it('dual-diffusion offers the runner-up at a doubtful position, and the tree verifier keeps it', () => {
    const wrong = reads(t, new Set([12, 30]));
    const chain = run(new DiffusionDrafter(EOS), new GreedyVerifier(), target, '', 8, wrong);
    const dual = run(new DiffusionDrafter(EOS, { branches: 2 }), new TreeVerifier(), target, '', 8, wrong);
    assert.equal(dual.text, target);
    assert.equal(chain.text, target);
    assert.equal(dual.forwards, perfect, `the alternatives cost nothing extra (chain: ${chain.forwards})`);
    assert.ok(chain.forwards > dual.forwards);
  });
  it('dual-diffusion with a chain verifier falls back to the plain draft', () => {
    const r = run(
      new DiffusionDrafter(EOS, { branches: 2 }),
      new GreedyVerifier(),
      target,
      '',
      8,
      reads(t, new Set([12])),
    );
    assert.equal(r.text, target);
  });
  it('blocks that read a different line cost speed, never text', () => {
    const other = reads(tok.encode('zzzz qqqq zzzz qqqq zzzz qqqq zzzz qqqq zzzzzz'));
    for (const [drafter, verifier] of [
      [new DiffusionDrafter(EOS), new GreedyVerifier()],
      [new DiffusionDrafter(EOS, { branches: 2 }), new TreeVerifier()],
    ] as const) {
      const r = run(drafter, verifier, target, '', 8, other);
      assert.equal(r.text, target);
    }
  });
});

describe('verifiers', () => {
  it('the tree verifier follows the branch the model agrees with', () => {
    const t = tok.encode('cab');
    const draft = trieOf([tok.encode('cat'), tok.encode('cab'), tok.encode('dog')]);
    const v = new TreeVerifier().verify(draft, scriptedLogits([...t, EOS], 0, draft));
    assert.deepEqual(
      v.accepted.map((i) => draft.tokens[i]),
      t,
    );
    assert.equal(v.bonus, EOS);
  });
  it('a trie shares common prefixes', () => {
    const d = trieOf([[1, 2, 3], [1, 2, 4], [5]]);
    assert.deepEqual(d.tokens, [1, 2, 3, 4, 5]);
    assert.deepEqual(d.parents, [-1, 0, 1, 1, -1]);
  });
  it('the relaxed verifier accepts a close second choice that greedy rejects', () => {
    const logits: RowLogits = {
      at: () => {
        const x = new Float32Array(VOCAB.length);
        x[10] = 5;
        x[11] = 4.5;
        return x;
      },
    };
    const draft = { tokens: [11, 11] };
    assert.equal(new GreedyVerifier().verify(draft, logits).accepted.length, 0);
    assert.equal(new RelaxedVerifier({ topK: 2, minRatio: 0.5 }).verify(draft, logits).accepted.length, 2);
    assert.equal(new RelaxedVerifier({ topK: 2, minRatio: 0.9 }).verify(draft, logits).accepted.length, 0);
  });
});

describe('prompt lookup', () => {
  it('finds the longest suffix, and the occurrence nearest the hint', () => {
    const idx = new TokenIndex(2);
    idx.push([1, 2, 3, 9, 7, 2, 3, 8, 1, 2, 3, 6]);
    assert.deepEqual(idx.find([1, 2, 3], 8), { end: 11, n: 3 }, 'the latest of the longest matches');
    assert.deepEqual(idx.find([5, 2, 3], 8, 6), { end: 7, n: 2 });
    assert.equal(idx.find([4, 4], 8), null);
  });

  it('in a text where one pair recurs 200000 times, finds the occurrence nearest the hint among a bounded few', () => {
    const idx = new TokenIndex(2);
    const text: number[] = [];
    for (let i = 0; i < 200_000; i++) text.push(10, 11);
    text.push(12);
    idx.push(text);
    // Near the middle: the match nearest the cursor, not the latest (400001) nor the first.
    const mid = idx.find([10, 11], 8, 200_001);
    assert.ok(mid && Math.abs(mid.end - 200_001) <= 2, `end ${mid?.end}`);
    assert.deepEqual(idx.find([9, 10, 11, 12], 8), null, 'no occurrence has a token after [11, 12]');
    // With no hint: the latest examined, which has a token after it.
    const last = idx.find([10, 11], 8);
    assert.ok(last && last.end === text.length - 1, `end ${last?.end}`);
  });
});
