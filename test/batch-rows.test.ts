import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Bundle, closeBundle, loadBundle } from '../src/engine/bundle/bundle.js';
import { decoderStep } from '../src/engine/decode/decoder-step.js';
import { FloatPool } from '../src/engine/decode/float-pool.js';
import { KvCache } from '../src/engine/decode/kv-cache.js';
import type { Pending } from '../src/engine/decode/sequence.js';
import { splitPass, type VisionPass } from '../src/engine/vision/group-pass.js';
import { keepVisualRows, runVision, type VisualState } from '../src/engine/vision/visual-state.js';

const L = 2;
const H = 2;
const DH = 3;
const VOCAB = 4;

/** A visual state whose every value says where it sits (layer, row, head, column, dim), rows `real` columns wide. */
function stateOf(real: readonly number[], visual = Math.max(...real), tag = 0): VisualState {
  const b = real.length;
  const k = new Float32Array(L * b * H * visual * DH);
  const v = new Float32Array(k.length);
  for (let l = 0; l < L; l++) {
    for (let r = 0; r < b; r++) {
      for (let h = 0; h < H; h++) {
        for (let c = 0; c < visual; c++) {
          for (let d = 0; d < DH; d++) {
            const at = (((l * b + r) * H + h) * visual + c) * DH + d;
            k[at] = tag + l * 10000 + r * 1000 + h * 100 + c * 10 + d;
            v[at] = -k[at];
          }
        }
      }
    }
  }
  const mask = new Float32Array(b * visual);
  real.forEach((n, r) => mask.fill(1, r * visual, r * visual + n));
  const ctcLogProbs = Float32Array.from({ length: b * visual * VOCAB }, (_, i) => tag + i);
  return { k, v, mask, ctcLogProbs, batch: b, visual };
}

/** Row r of a state, real columns only: K, V, mask and CTC logits. */
function rowOf(s: VisualState, r: number): { k: number[]; v: number[]; ctc: number[]; real: number } {
  let real = 0;
  while (real < s.visual && s.mask[r * s.visual + real] > 0) real++;
  const k: number[] = [];
  const v: number[] = [];
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const at = ((l * s.batch + r) * H + h) * s.visual * DH;
      k.push(...s.k.subarray(at, at + real * DH));
      v.push(...s.v.subarray(at, at + real * DH));
    }
  }
  return { k, v, ctc: [...s.ctcLogProbs.subarray(r * s.visual * VOCAB, (r * s.visual + real) * VOCAB)], real };
}

describe('the batch as lines join and leave', () => {
  it("a batch that keeps only its narrower lines stops carrying the widest line's padding", () => {
    const s = stateOf([5, 9, 3]);
    const kept = keepVisualRows(s, [0, 2], L, H, DH, new FloatPool());
    assert.equal(kept.visual, 5, 'as wide as the widest kept line');
    assert.equal(kept.batch, 2);
    assert.deepEqual(rowOf(kept, 0), rowOf(s, 0));
    assert.deepEqual(rowOf(kept, 1), rowOf(s, 2));
    // Keeping the widest line keeps the width, and every row whole.
    const all = keepVisualRows(s, [1, 0], L, H, DH);
    assert.equal(all.visual, 9);
    assert.deepEqual(rowOf(all, 0), rowOf(s, 1));
    assert.deepEqual(rowOf(all, 1), rowOf(s, 0));
  });

  it('a landed vision pass split after n lines holds the same lines, readings and visual rows as the whole', () => {
    const chunks = [stateOf([2, 3, 4], 4, 0.25), stateOf([6, 6], 6, 0.5)];
    const members = ['a', 'b', 'c', 'd', 'e'];
    const pass: VisionPass = {
      group: members.map((id) => ({ task: { id } }) as unknown as Pending),
      chunks,
      ctc: members.map((_, i) => [i + 5]),
      ctcFrames: members.map((_, i) => [i]),
      ctcProbs: members.map((_, i) => [0.5 + i / 10]),
      error: null,
      settled: true,
      ms: 7,
      result: Promise.resolve(),
    };
    const rows = [0, 1, 2].map((r) => rowOf(chunks[0], r)).concat([0, 1].map((r) => rowOf(chunks[1], r)));
    for (const n of [1, 2, 3, 4]) {
      const [head, rest] = splitPass(pass, n, { nLayers: L, nHeads: H, headDim: DH }, new FloatPool());
      for (const [part, from] of [
        [head, 0],
        [rest, n],
      ] as const) {
        const size = part === head ? n : members.length - n;
        assert.equal(part.group.length, size);
        assert.deepEqual(part.group, pass.group.slice(from, from + size));
        assert.deepEqual(part.ctc, pass.ctc.slice(from, from + size));
        assert.deepEqual(part.ctcFrames, pass.ctcFrames.slice(from, from + size));
        assert.deepEqual(part.ctcProbs, pass.ctcProbs.slice(from, from + size));
        const got = part.chunks.flatMap((c) => Array.from({ length: c.batch }, (_, r) => rowOf(c, r)));
        assert.deepEqual(
          got,
          rows.slice(from, from + size),
          `rows of the ${part === head ? 'head' : 'rest'} after a cut at ${n}`,
        );
      }
    }
  });
});

describe("the decoder's optional outputs", () => {
  let bundle: Bundle;
  before(async () => {
    bundle = await loadBundle();
  });
  after(async () => {
    await closeBundle(bundle);
  });

  it(
    'a forward without the hidden state and the visual attention gives the ' + 'same logits and new cache entries',
    async () => {
      const { nLayers, nHeads, headDim } = bundle.config.dims;
      const { height } = bundle.config.image;
      const crop = (width: number) => ({
        width,
        height,
        data: Uint8Array.from({ length: width * height }, (_, i) => ((i * 7919) % 13 < 3 ? 0 : 255)),
      });
      const vis = await runVision(bundle, { crops: [crop(200), crop(320)] });
      const input = {
        tokens: [
          [1, 40, 41],
          [1, 42, 43],
        ],
        positions: [
          [0, 1, 2],
          [0, 1, 2],
        ],
      };
      const run = (fetch?: { hidden: boolean; visAttn: boolean }) => {
        const cache = new KvCache(nLayers, nHeads, headDim, 2);
        cache.reserve(8);
        return decoderStep(bundle, cache, vis, { ...input, ...(fetch ? { fetch } : {}) });
      };
      const full = await run();
      const lean = await run({ hidden: false, visAttn: false });
      assert.deepEqual(lean.logits, full.logits);
      assert.deepEqual(lean.newK, full.newK);
      assert.deepEqual(lean.newV, full.newV);
      assert.equal(lean.hidden.length, 0);
      assert.equal(lean.visAttn.length, 0);
      assert.ok(full.hidden.length > 0 && full.visAttn.length > 0, 'asked for, they come back');
    },
  );
});
