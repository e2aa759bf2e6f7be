import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Engine } from '../src/engine/engine.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import { cutColumns, cutWideCrop, joinPieces, PieceStream } from '../src/engine/vision/wide-crops.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { readDocument } from '../src/worker/read-document.js';
import { ROOT } from './helpers/fixtures.js';

const FIXTURES = join(ROOT, 'test', 'fixtures');

/**
 * Column extents of a line of type: letters 7 columns wide and 20 rows tall, 2 blank columns apart; word spaces and
 * runs of leader dots (3 rows tall, 3 columns wide, 3 apart) where told.
 */
function typeLine(width: number, spaces: [number, number][], dots: [number, number][] = []): Uint16Array {
  const e = new Uint16Array(width);
  for (let x = 0; x < width; x++) e[x] = x % 9 < 7 ? 20 : 0;
  for (const [a, b] of dots) for (let x = a; x < b; x++) e[x] = x % 6 < 3 ? 3 : 0;
  for (const [a, b] of spaces) e.fill(0, a, b);
  return e;
}

describe('cutting a line too wide to read whole', () => {
  it("cuts in the widest word space of each piece's reach, so no piece is wider than the decoder reads", () => {
    const extent = typeLine(1600, [
      [300, 308],
      [600, 612],
      [1000, 1008],
      [1300, 1308],
    ]);
    const cuts = cutColumns(extent, 800);
    assert.deepEqual(cuts, [606, 1304], 'the widest space in 400-800, then the one space in 1006-1406');
    const edges = [0, ...cuts, 1600];
    for (let i = 1; i < edges.length; i++) assert.ok(edges[i] - edges[i - 1] <= 800);
  });

  it('never cuts inside a run of leader dots when a word space is in reach', () => {
    // "words ...... words": a word space at 448-456, then dots from 500 to 1100.
    const extent = typeLine(1200, [[448, 456]], [[500, 1100]]);
    assert.deepEqual(cutColumns(extent, 800), [452], 'the word space, though gaps between dots lie later in the reach');
  });

  it('reads a line of leaders on past the reach rather than cut between dots, up to what one vision pass takes', () => {
    // "Notices ........ vii": a word to 300, dots to 1400, a page number after a space.
    const toc = typeLine(1450, [[1400, 1410]], [[300, 1400]]);
    assert.deepEqual(cutColumns(toc, 800, 1600), [], 'one piece: narrower than a vision pass takes');
    assert.deepEqual(
      cutColumns(toc, 800, 800),
      [],
      'no word space at all (the dots hold none): whole, squeezed to fit',
    );
  });

  it('reads a line with no word space (a rule) whole, squeezed to one vision pass as before', () => {
    const crop = { width: 2000, height: 32, data: new Uint8Array(2000 * 32).fill(255) };
    crop.data.fill(0, 15 * 2000, 17 * 2000); // a rule two rows thick, the whole width
    const pieces = cutWideCrop(crop, 800, 1600);
    assert.equal(pieces.length, 1);
    assert.equal(pieces[0].crop.width, 1600);
    assert.equal(pieces[0].scale, 2000 / 1600);
    assert.equal(pieces[0].crop.data[16 * 1600 + 800], 0, 'the rule is still there');
  });

  it(
    "cuts at the reach's end where no column is blank in a line that has " +
      'word spaces, and leaves a narrow crop whole',
    () => {
      const solid = typeLine(2000, [[100, 110]]);
      solid.fill(20, 400, 2000);
      assert.deepEqual(cutColumns(solid, 800, 1600), [799], 'then the rest, 1,201 columns, fits one vision pass');
      const crop = { width: 700, height: 32, data: new Uint8Array(700 * 32).fill(255) };
      const pieces = cutWideCrop(crop, 800);
      assert.equal(pieces.length, 1);
      assert.equal(pieces[0].crop, crop);
    },
  );

  it("joins the pieces' readings with a space, their glyphs moved to the whole crop's columns", () => {
    const pieces = [0, 500].map((x) => ({ crop: { width: 500, height: 32, data: new Uint8Array(0) }, x, scale: 1 }));
    const joined = joinPieces(pieces, [
      {
        text: 'ab',
        confidence: 0.5,
        ctcText: 'ab',
        glyphs: [
          { char: 'a', x0: 0, x1: 8, prob: 0.5 },
          { char: 'b', x0: 8, x1: 16, prob: 0.5 },
        ],
      },
      {
        text: ' c',
        confidence: 1,
        ctcText: 'c',
        glyphs: [
          { char: ' ', x0: 0, x1: 4, prob: 1 },
          { char: 'c', x0: 4, x1: 12, prob: 1 },
        ],
      },
    ]);
    assert.equal(joined.text, 'ab c');
    assert.equal(joined.ctcText, 'ab c');
    assert.ok(Math.abs(joined.confidence - 2 / 3) < 1e-9, 'weighted by characters');
    assert.deepEqual(
      joined.glyphs?.map((g) => [g.char, g.x0, g.x1]),
      [
        ['a', 0, 8],
        ['b', 8, 16],
        [' ', 16, 504],
        ['c', 504, 512],
      ],
    );
  });

  it("streams a later piece's tokens only after the pieces before it, with a space between", () => {
    const got: string[] = [];
    const s = new PieceStream(3, (text) => got.push(text));
    s.tokens(2, 'z', [false], 0);
    s.tokens(0, 'ab', [false, true], 2);
    s.tokens(1, 'c', [false], 0);
    s.finished(0);
    s.tokens(1, 'd', [false], 0);
    s.finished(2);
    assert.equal(got.join(''), 'ab cd');
    s.finished(1);
    assert.equal(got.join(''), 'ab cd z');
  });
});

describe('lines longer than the model learnt to read', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  it('read to their end: full-width lines of 144-228 characters come out as printed', async () => {
    // A synthetic page (training/make_page.py) whose body lines are 1.4-2.3 times as long as any training line.
    const truth = readFileSync(join(FIXTURES, 'wide-lines.txt'), 'utf8').trim().split('\n');
    const long = truth.filter((l) => l.length > 140);
    assert.ok(long.length >= 3);
    const doc = await readDocument(engine, readFileSync(join(FIXTURES, 'wide-lines.png')), 'wide-lines.png');
    const lines = doc.pages[0].blocks.flatMap((b) => b.lines);
    const t = long.map((ref) => {
      // The line the layout found for it: the one whose text is nearest.
      const best = lines.map((l) => tally(l.text, ref)).sort((a, b) => a.edits - b.edits)[0];
      return best;
    });
    const cer = corpusCer(t);
    // Whole, these lines came out with their last third as noise (CER 20-30%).
    assert.ok(cer < 0.03, `CER ${(100 * cer).toFixed(2)}% on the long lines`);
  });

  it("read in pieces, still give their verifier's text with any lossless drafter", async () => {
    const bytes = readFileSync(join(FIXTURES, 'wide-lines.png'));
    const text = async (decoding: DecodingOptionsInput): Promise<string> =>
      (await readDocument(engine, bytes, 'wide-lines.png', { decoding })).text;
    const greedy = await text({ drafter: 'none', verifier: 'greedy' });
    for (const drafter of ['ctc', 'ngram', 'mtp'] as const)
      assert.equal(await text({ drafter, verifier: 'greedy' }), greedy, drafter);
    assert.equal(
      await text({ drafter: 'ctc', verifier: 'tree' }),
      await text({ drafter: 'none', verifier: 'tree' }),
      'ctc + tree',
    );
  });

  it('are read with the same words whether they arrive streamed or whole', async () => {
    const streamed = new Map<number, string>();
    const doc = await readDocument(engine, readFileSync(join(FIXTURES, 'wide-lines.png')), 'wide-lines.png', {
      onTokens: (_page, line, text) => streamed.set(line, (streamed.get(line) ?? '') + text),
    });
    const lines = doc.pages[0].blocks.flatMap((b) => b.lines.map((l) => l.text));
    lines.forEach((text, i) =>
      assert.equal((streamed.get(i) ?? '').replace(/\s+/g, ' ').trim(), text.replace(/\s+/g, ' ').trim(), `line ${i}`),
    );
  });

  it('carry word boxes across their pieces, each word inside the page', async () => {
    const doc = await readDocument(engine, readFileSync(join(FIXTURES, 'wide-lines.png')), 'wide-lines.png', {
      words: true,
    });
    const line = doc.pages[0].blocks.flatMap((b) => b.lines).sort((a, b) => b.text.length - a.text.length)[0];
    const words = line.words ?? [];
    assert.equal(words.map((w) => w.text).join(' '), line.text.split(/\s+/).filter(Boolean).join(' '));
    for (let i = 1; i < words.length; i++) assert.ok(words[i].box.x >= words[i - 1].box.x, 'left to right');
    assert.ok(words[words.length - 1].box.x > line.box.x + 0.8 * line.box.width, "the last word at the line's end");
  });
});
