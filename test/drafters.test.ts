/**
 * Drafter and verifier logic against a scripted model: the "model" here is a fixed target text whose next
 * character is always the argmax, so these tests pin down re-anchoring and tree walking exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DocumentContext } from '../src/engine/document-context.js';
import type { Draft, RowLogits } from '../src/engine/draft.js';
import { CtcDrafter } from '../src/engine/drafters/ctc.js';
import { type Drafter, type SequenceView, trieOf } from '../src/engine/drafters/drafter.js';
import { TokenIndex } from '../src/engine/drafters/lookup.js';
import { Tokenizer } from '../src/engine/tokenizer.js';
import { GreedyVerifier } from '../src/engine/verifiers/greedy.js';
import { RelaxedVerifier } from '../src/engine/verifiers/relaxed.js';
import { TreeVerifier } from '../src/engine/verifiers/tree.js';
import type { Verifier } from '../src/engine/verifiers/verifier.js';

const VOCAB = ['<pad>', '<bos>', '<eos>', '<mask>', '<unk>', ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
const tok = new Tokenizer(VOCAB, { pad: 0, bos: 1, eos: 2, mask: 3, unk: 4, ctcBlank: 0 });
const EOS = 2;

/** Logits for a row whose model would write `target`: after `prefix` (+ path through the draft), argmax is the next char. */
function scriptedLogits(target: number[], committed: number, draft: Draft): RowLogits {
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
      const next = onTrack ? (target[committed + path.length] ?? EOS) : 5;
      x[next] = 10;
      return x;
    },
  };
}

function run(drafter: Drafter, verifier: Verifier, target: string, ctc: string, budget = 8): { text: string; forwards: number } {
  const t = tok.encode(target);
  const seq = {
    id: 1, tokens: [] as number[], ctc: tok.encode(ctc), context: new DocumentContext(tok), budget, tree: verifier.trees,
    hidden: null, position: 0,
    lastLayerVisual: () => {
      throw new Error('these drafters do not look at the line');
    },
  };
  let forwards = 0;
  for (;;) {
    const proposed = drafter.propose([seq as SequenceView]);
    if (proposed instanceof Promise) throw new Error('a synchronous drafter was expected');
    const draft = proposed[0];
    const verdict = verifier.verify(draft, scriptedLogits(t, seq.tokens.length, draft));
    forwards++;
    const committed = [...verdict.accepted.map((i) => draft.tokens[i]), verdict.bonus];
    drafter.observe?.(seq as SequenceView, draft, verdict, committed);
    const end = committed.indexOf(EOS);
    seq.tokens.push(...(end < 0 ? committed : committed.slice(0, end)));
    if (end >= 0 || forwards > 200) break;
  }
  return { text: tok.decode(seq.tokens), forwards };
}

describe('the ctc drafter re-anchors on the verifier\'s correction', () => {
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
        assert.ok(r.forwards <= perfect + 3, `${verifier.name}: ${r.forwards} forwards, a perfect reading takes ${perfect}`);
      }
    });
  }
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
});

describe('verifiers', () => {
  it('the tree verifier follows the branch the model agrees with', () => {
    const t = tok.encode('cab');
    const draft = trieOf([tok.encode('cat'), tok.encode('cab'), tok.encode('dog')]);
    const v = new TreeVerifier().verify(draft, scriptedLogits([...t, EOS], 0, draft));
    assert.deepEqual(v.accepted.map((i) => draft.tokens[i]), t);
    assert.equal(v.bonus, EOS);
  });
  it('a trie shares common prefixes', () => {
    const d = trieOf([[1, 2, 3], [1, 2, 4], [5]]);
    assert.deepEqual(d.tokens, [1, 2, 3, 4, 5]);
    assert.deepEqual(d.parents, [-1, 0, 1, 1, -1]);
  });
  it('the relaxed verifier accepts a close second choice that greedy rejects', () => {
    const logits: RowLogits = { at: () => { const x = new Float32Array(VOCAB.length); x[10] = 5; x[11] = 4.5; return x; } };
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
});
