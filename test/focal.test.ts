import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { cropLines } from '../src/document/crop-lines.js';
import { decodeImage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
import { Engine } from '../src/engine/engine.js';
import { decoderStep, takesPositionMask } from '../src/engine/decode/decoder-step.js';
import {
  draftSelection,
  MAX_PRUNED_ROWS,
  MIN_KEPT,
  nextSelection,
  positionMask,
  positionWindows,
  unionOf,
} from '../src/engine/decode/focal.js';
import { KvCache } from '../src/engine/decode/kv-cache.js';
import { runVision } from '../src/engine/vision/visual-state.js';
import type { GrayCrop } from '../src/engine/vision/preprocess.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { realLines } from './helpers/eval-lines.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

describe('focal pruning of visual tokens', () => {
  it('keeps the share asked for: the strongest fixations, then their neighbours, rightward first', () => {
    const indices = Array.from({ length: 100 }, (_, i) => i);
    const mass = indices.map((i) => (i === 40 ? 1 : i === 41 ? 0.5 : 0.001));
    const sel = nextSelection(indices, mass, 100, 0.1);
    assert.equal(sel.length, 10);
    assert.ok(sel.includes(40) && sel.includes(41), 'the fixations');
    assert.ok(sel.filter((i) => i > 41).length > sel.filter((i) => i < 40).length, 'more ahead of the eye than behind');
    assert.deepEqual(
      sel,
      [...sel].sort((a, b) => a - b),
    );
    assert.equal(
      nextSelection(indices.slice(0, 8), mass.slice(0, 8), 8, 0.05).length,
      MIN_KEPT,
      `never fewer than ${MIN_KEPT}`,
    );
    assert.equal(
      nextSelection(indices.slice(0, 4), mass.slice(0, 4), 4, 0.05).length,
      4,
      'a line shorter than that keeps all',
    );
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
      assert.deepEqual(
        all.lines.map((l) => l.text),
        plain.lines.map((l) => l.text),
      );
      assert.equal(all.metrics.visualTokenRatio, 1);
      // A fixed draft length: the share attended counts each draft's full refresh step, and an `auto` length follows
      // the machine's measured forward cost (a table measured under load would move it).
      // One line per forward: a forward of more than MAX_PRUNED_ROWS lines is not pruned (it would not pay).
      const previous = engine.maxBatch;
      engine.maxBatch = 1;
      const pruned = await engine
        .readLines(crops, { decoding: { draftLength: 8, visualTokens: { keep: 0.2 } } })
        .finally(() => (engine.maxBatch = previous));
      assert.ok(
        pruned.metrics.visualTokenRatio < 0.6 && pruned.metrics.visualTokenRatio >= 0.2,
        `ratio ${pruned.metrics.visualTokenRatio}`,
      );
      assert.ok(
        pruned.lines.every((l) => l.text.length > 0),
        'every line still read',
      );
    });

    for (const [name, decoding] of [
      ['default decoding (ctc + joint)', {}],
      ['ctc + greedy', { drafter: 'ctc', verifier: 'greedy' }],
    ] as const) {
      it(
        `${name} with keep 0.2 on real lines stays within 0.3 CER points of ` +
          `unpruned and keeps 90% of its exact lines`,
        async () => {
          const lines = (await realLines(engine, 40)).filter((l) => l.set !== 'tesseract_lstmf_lines');
          // A fixed draft length: with pruning the text depends on what each step drafts, and `auto` follows the
          // machine's measured forward cost.
          const read = async (keep: number): Promise<string[]> =>
            (
              await engine.readLines(
                lines.map((l) => l.crop),
                { decoding: { ...decoding, draftLength: 8, visualTokens: { keep } } },
              )
            ).lines.map((l) => l.text);
          const previous = engine.maxBatch;
          engine.maxBatch = MAX_PRUNED_ROWS; // wider forwards are not pruned
          const full = await read(1);
          const pruned = await read(0.2).finally(() => (engine.maxBatch = previous));
          const cer = (texts: string[]): number => corpusCer(texts.map((t, i) => tally(t, lines[i].truth)));
          const exact = (texts: string[]): number =>
            texts.filter((t, i) => tally(t, lines[i].truth).edits === 0).length;
          assert.ok(
            cer(pruned) - cer(full) <= 0.003,
            `CER ${cer(pruned)} pruned against ${cer(full)} unpruned, on ${lines.length} lines`,
          );
          assert.ok(exact(pruned) >= 0.9 * exact(full), `${exact(pruned)} lines exact pruned against ${exact(full)}`);
        },
      );
    }
  });

  it('a step verifying a draft attends from where the decoder reads to past the last drafted token', () => {
    // The reader's selection sits at columns 40-44; the CTC drafter read three tokens at columns 60, 63 and 66.
    const cols = draftSelection([40, 41, 42, 43, 44], 42, [1, 2, 3], [60, 63, 66], 100, 3);
    for (const c of [30, 40, 42, 50, 60, 63, 66, 67, 70]) assert.ok(cols.includes(c), `column ${c} left out`);
    assert.ok(!cols.includes(90) && !cols.includes(10), 'far columns stay out');
    // Without columns, the drafted positions are placed from the fixation at the line's character width.
    const guessed = draftSelection([40, 41, 42], 42, [1, 2], undefined, 100, 3);
    assert.ok(guessed.includes(48) && guessed.includes(52) && !guessed.includes(70));
    // No draft: the reader's selection as it is.
    assert.deepEqual(draftSelection([3, 4, 5], 4, [], undefined, 100, 3), [3, 4, 5]);
  });

  it(
    "each drafted position sees the reader's window moved to where its own " + 'token was read, and no other column',
    () => {
      // The reader looks at 40-44 (fixation 42); the CTC drafter read three tokens at columns 60, 63 and 66.
      const windows = positionWindows([40, 41, 42, 43, 44], 42, [1, 2, 3], [60, 63, 66], 100, 3);
      assert.deepEqual(windows, [
        [40, 41, 42, 43, 44],
        [58, 59, 60, 61, 62],
        [61, 62, 63, 64, 65],
        [64, 65, 66, 67, 68],
      ]);
      // Without columns, token j sits depth j character widths right of the fixation; a window past the line's end is
      // pulled in to its last column.
      assert.deepEqual(positionWindows([40, 41, 42], 42, [1, 2], undefined, 47, 3), [[40, 41, 42], [43, 44, 45], [46]]);
      assert.deepEqual(unionOf(windows), [40, 41, 42, 43, 44, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68]);

      // Two rows gathered to 4 slots: row 0 with windows (its columns 10, 11, 20, 21 in slots 0-3), row 1 unpruned
      // with 3 real columns. Row 0's token 0 sees slots 0-1, token 1 slots 2-3, its padding token all it gathered.
      const gathered = {
        k: new Float32Array(0),
        v: new Float32Array(0),
        mask: Float32Array.of(1, 1, 1, 1, 1, 1, 1, 0),
        ctcLogProbs: new Float32Array(0),
        batch: 2,
        visual: 4,
      };
      const mask = positionMask(
        gathered,
        [
          [10, 11, 20, 21],
          [0, 1, 2],
        ],
        [
          [
            [10, 11],
            [20, 21],
          ],
          null,
        ],
        3,
      );
      assert.deepEqual([...mask], [1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0]);
    },
  );

  it(
    'the decoder takes a visual mask per new token: shared, it gives the ' +
      'per-row numbers bit for bit; a window keeps attention inside it',
    async () => {
      const engine = await Engine.open();
      try {
        const { bundle } = engine;
        assert.ok(
          takesPositionMask(bundle.decoder),
          'the shipped decoder takes [B, 1|T, V] masks (training/position_mask.py)',
        );
        const page = await decodeImage(readFileSync(SAMPLE_PAGE), 'sample-page.png');
        const crops = (await cropLines(page, findLines(page), engine.imageSpec)).slice(0, 2);
        const vis = await runVision(bundle, { crops });
        const { nLayers, nHeads, headDim } = bundle.config.dims;
        const { bos } = bundle.config.specialIds;
        const t = 4;
        const input = {
          tokens: [
            [bos, 40, 41, 42],
            [bos, 50, 51, 52],
          ],
          positions: [
            [0, 1, 2, 3],
            [0, 1, 2, 3],
          ],
        };
        const cache = new KvCache(nLayers, nHeads, headDim, 2);
        const shared = await decoderStep(bundle, cache, vis, input);
        const perToken = new Float32Array(2 * t * vis.visual);
        for (let r = 0; r < 2; r++)
          for (let i = 0; i < t; i++)
            perToken.set(vis.mask.subarray(r * vis.visual, (r + 1) * vis.visual), (r * t + i) * vis.visual);
        const same = await decoderStep(bundle, cache, vis, { ...input, visMask: perToken });
        assert.deepEqual(same.logits, shared.logits);
        assert.deepEqual(same.visAttn, shared.visAttn);
        // Row 0's last token sees columns 5-14 only: its focal attention outside them is exactly 0, and the tokens
        // before it (which cannot see it: causal) read as before.
        const windowed = perToken.slice();
        const last = (0 * t + 3) * vis.visual;
        windowed.fill(0, last, last + vis.visual);
        windowed.fill(1, last + 5, last + 15);
        const win = await decoderStep(bundle, cache, vis, { ...input, visMask: windowed });
        let outside = 0;
        for (let j = 0; j < vis.visual; j++) if (j < 5 || j >= 15) outside += win.visAttn[last + j];
        assert.equal(outside, 0);
        const vocab = bundle.config.dims.vocabSize;
        assert.deepEqual(win.logits.subarray(0, 3 * vocab), shared.logits.subarray(0, 3 * vocab));
        assert.notDeepEqual(win.logits.subarray(3 * vocab, 4 * vocab), shared.logits.subarray(3 * vocab, 4 * vocab));
      } finally {
        await engine.close();
      }
    },
  );
});
