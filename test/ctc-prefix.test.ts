import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CtcPrefixScorer } from '../src/engine/ctc-prefix.js';

const BLANK = 0;

/** The CTC collapse of a frame path: merge repeats, drop blanks. */
function collapse(path: readonly number[]): number[] {
  const out: number[] = [];
  let prev = -1;
  for (const c of path) {
    if (c !== prev && c !== BLANK) out.push(c);
    prev = c;
  }
  return out;
}

/** Every frame path of length T over V symbols with its probability under per-frame softmax(logits). */
function* paths(probs: number[][]): Generator<{ path: number[]; p: number }> {
  const T = probs.length;
  const V = probs[0].length;
  const idx = new Array<number>(T).fill(0);
  for (;;) {
    yield { path: [...idx], p: idx.reduce((p, c, t) => p * probs[t][c], 1) };
    let t = T - 1;
    while (t >= 0 && ++idx[t] === V) idx[t--] = 0;
    if (t < 0) return;
  }
}

function softmaxRows(logits: number[][]): number[][] {
  return logits.map((row) => {
    const m = Math.max(...row);
    const e = row.map((x) => Math.exp(x - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  });
}

const startsWith = (a: readonly number[], prefix: readonly number[]): boolean => prefix.every((c, i) => a[i] === c);

describe('CTC prefix scoring', () => {
  // 5 frames over blank + 3 characters: every path enumerated (4^5 = 1024) gives the exact answer.
  const logits = [
    [0.2, 1.5, -0.3, 0.1],
    [1.1, 0.4, 0.9, -1.0],
    [-0.5, 0.3, 1.2, 0.8],
    [0.9, -0.2, 0.1, 1.4],
    [1.3, 0.6, -0.7, 0.2],
  ];
  const probs = softmaxRows(logits);
  const scorer = new CtcPrefixScorer(Float32Array.from(logits.flat()), logits.length, 4, BLANK);
  const all = [...paths(probs)].map(({ path, p }) => ({ out: collapse(path), p }));

  for (const prefix of [[1], [2], [1, 2], [2, 2], [1, 2, 3], [3, 1, 3]]) {
    it(`scores "${prefix.join(',')}" as the total probability of the readings it begins (and of exactly it)`, () => {
      let state = scorer.initial();
      for (const c of prefix) state = scorer.extend(state, c);
      const begins = all.filter((a) => startsWith(a.out, prefix)).reduce((s, a) => s + a.p, 0);
      const exactly = all.filter((a) => a.out.length === prefix.length && startsWith(a.out, prefix)).reduce((s, a) => s + a.p, 0);
      assert.ok(Math.abs(Math.exp(state.score) - begins) < 1e-5, `prefix ${Math.exp(state.score)} vs ${begins}`);
      assert.ok(Math.abs(Math.exp(scorer.end(state)) - exactly) < 1e-5, `exact ${Math.exp(scorer.end(state))} vs ${exactly}`);
    });
  }

  it('the empty reading is every-frame-blank', () => {
    const p = probs.reduce((acc, row) => acc * row[BLANK], 1);
    assert.ok(Math.abs(Math.exp(scorer.end(scorer.initial())) - p) < 1e-6);
  });
});
