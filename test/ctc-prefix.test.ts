import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ctcLogSoftmax } from '../src/engine/ctc/head.js';
import { CtcPrefixScorer, WINDOW } from '../src/engine/ctc/prefix.js';

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
  // The head's log-probabilities as the vision pass hands them over.
  const logProbs = Float32Array.from(logits.flat());
  ctcLogSoftmax(logProbs, new Float32Array(logits.length).fill(1), 1, logits.length);
  const scorer = new CtcPrefixScorer(logProbs, logits.length, 4, BLANK);
  const all = [...paths(probs)].map(({ path, p }) => ({ out: collapse(path), p }));

  for (const prefix of [[1], [2], [1, 2], [2, 2], [1, 2, 3], [3, 1, 3]]) {
    it(`scores "${prefix.join(',')}" as the total probability of the readings it begins (and of exactly it)`, () => {
      let state = scorer.initial();
      for (const c of prefix) state = scorer.extend(state, c);
      const begins = all.filter((a) => startsWith(a.out, prefix)).reduce((s, a) => s + a.p, 0);
      const exactly = all
        .filter((a) => a.out.length === prefix.length && startsWith(a.out, prefix))
        .reduce((s, a) => s + a.p, 0);
      assert.ok(Math.abs(Math.exp(state.score) - begins) < 1e-5, `prefix ${Math.exp(state.score)} vs ${begins}`);
      assert.ok(
        Math.abs(Math.exp(scorer.end(state)) - exactly) < 1e-5,
        `exact ${Math.exp(scorer.end(state))} vs ${exactly}`,
      );
    });
  }

  it('the empty reading is every-frame-blank', () => {
    const p = probs.reduce((acc, row) => acc * row[BLANK], 1);
    assert.ok(Math.abs(Math.exp(scorer.end(scorer.initial())) - p) < 1e-6);
  });

  it('held over a window of frames, a long line scores as the full recursion over every frame does', () => {
    // 240 frames, 60 vocabulary entries: a confident reading of 40 characters (each 2-4 frames, blanks between),
    // with noise, as the CTC head gives a printed line.
    const T = 240;
    const V = 60;
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const logits = new Float32Array(T * V);
    const truth: number[] = [];
    for (let t = 0; t < T;) {
      const c = 1 + Math.floor(rand() * (V - 1));
      truth.push(c);
      const run = 2 + Math.floor(rand() * 3);
      for (let k = 0; k < run && t < T; k++, t++) {
        for (let v = 0; v < V; v++) logits[t * V + v] = rand() * 4 - 2;
        logits[t * V + c] = 9 + rand() * 3;
      }
      if (t < T) {
        for (let v = 0; v < V; v++) logits[t * V + v] = rand() * 4 - 2;
        logits[t * V + BLANK] = 10;
        t++;
      }
    }
    // The full recursion over every frame (what the scorer computed before it kept windows), on the same float32
    // log-probabilities.
    const logp = new Float32Array(T * V);
    for (let t = 0; t < T; t++) {
      let m = -Infinity;
      for (let v = 0; v < V; v++) m = Math.max(m, logits[t * V + v]);
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(logits[t * V + v] - m);
      for (let v = 0; v < V; v++) logp[t * V + v] = logits[t * V + v] - m - Math.log(z);
    }
    const add = (a: number, b: number): number =>
      a === -Infinity ? b : b === -Infinity ? a : Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b)));
    const full = (prefix: number[]): { score: number; end: number } => {
      let rn = new Float64Array(T).fill(-Infinity);
      let rb = new Float64Array(T);
      for (let t = 0, acc = 0; t < T; t++) rb[t] = acc += logp[t * V + BLANK];
      let score = 0;
      let last = -1;
      for (const c of prefix) {
        const n = new Float64Array(T).fill(-Infinity);
        const b = new Float64Array(T).fill(-Infinity);
        n[0] = last < 0 ? logp[c] : -Infinity;
        let psi = n[0];
        for (let t = 1; t < T; t++) {
          const phi = last === c ? rb[t - 1] : add(rb[t - 1], rn[t - 1]);
          n[t] = add(n[t - 1], phi) + logp[t * V + c];
          b[t] = add(b[t - 1], n[t - 1]) + logp[t * V + BLANK];
          psi = add(psi, phi + logp[t * V + c]);
        }
        rn = n;
        rb = b;
        score = psi;
        last = c;
      }
      return { score, end: add(rn[T - 1], rb[T - 1]) };
    };
    const scorer = new CtcPrefixScorer(logp, T, V, BLANK);
    let state = scorer.initial();
    for (let i = 0; i < truth.length; i++) {
      const want = full(truth.slice(0, i + 1));
      // A wrong next character as well: its score must hold too, however low.
      const wrong = truth[i] === 1 ? 2 : 1;
      const other = scorer.extend(state, wrong);
      const wantOther = full([...truth.slice(0, i), wrong]);
      state = scorer.extend(state, truth[i]);
      assert.ok(state.rn.length < T / 4, `a window of ${state.rn.length} frames, not the line's ${T}`);
      assert.ok(
        Math.abs(state.score - want.score) < 1e-9 * Math.max(1, Math.abs(want.score)),
        `prefix ${i}: ${state.score} vs ${want.score}`,
      );
      // Where the full score is within the window's reach of the right one, it holds to float precision; further
      // down, the window's score is a lower bound and is far below the right one as well.
      if (wantOther.score > want.score - WINDOW / 2)
        assert.ok(Math.abs(other.score - wantOther.score) < 1e-6 * Math.abs(wantOther.score));
      else assert.ok(other.score <= wantOther.score + 1e-9 && other.score < want.score - WINDOW / 4);
    }
    const end = scorer.end(state);
    assert.ok(Math.abs(end - full(truth).end) < 1e-9 * Math.abs(full(truth).end), `end ${end} vs ${full(truth).end}`);
  });
});
