import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSource } from '../src/document/source.js';
import { Engine } from '../src/engine/engine.js';
import sharp from 'sharp';
import { PAGES_AHEAD, readDocument } from '../src/worker/read-document.js';
import { readFileSync } from 'node:fs';
import { EngineError } from '../src/engine/errors.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { join } from 'node:path';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages, pdfWithText } from './helpers/pdfs.js';

const LINES = [
  'The quick brown fox jumps over the lazy dog.',
  'Pack my box with five dozen liquor jugs.',
  'Sphinx of black quartz, judge my vow.',
];

describe('a born-digital PDF', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  it('has its text layer read, page by page', async () => {
    const src = await openSource(pdfWithText(LINES), 'digital.pdf');
    assert.equal(src.textLayer(0), LINES.join('\n'));
  });

  it(
    'offers its text layer to the reference drafter, which then drafts ' +
      'from it; with the layer as evidence off, the answer is read from ' +
      'pixels',
    async () => {
      const pdf = pdfWithText(LINES);
      const plain = await readDocument(engine, pdf, 'digital.pdf', { textLayer: false });
      const ref = await readDocument(engine, pdf, 'digital.pdf', {
        textLayer: false,
        decoding: { drafter: 'reference', verifier: 'greedy', draftLength: 16 },
      });
      assert.equal(ref.text, plain.text, 'lossless: the same text as plain decoding');
      assert.ok(ref.metrics.draftTokens > 0, 'the text layer was drafted from');
      assert.equal(plain.pages[0].blocks.flatMap((b) => b.lines).length, LINES.length);
    },
  );
});

describe('a long document', () => {
  it(`has at most ${PAGES_AHEAD} pages handed to the engine at once, and every page is read`, async () => {
    const engine = await Engine.open();
    try {
      // Pages slower to decode than to render (a third of the sample page): unbounded, they would all pile up.
      const sample = readFileSync(SAMPLE_PAGE);
      const meta = await sharp(sample).metadata();
      const h = Math.round((meta.height as number) / 3);
      const strip = await sharp(sample)
        .extract({ left: 0, top: 0, width: meta.width as number, height: h })
        .png()
        .toBuffer();
      const pages = PAGES_AHEAD + 3;
      // Count the pages whose lines the engine holds at once: each is one readBlocks call until it settles.
      const readBlocks = engine.readBlocks.bind(engine);
      let held = 0;
      let most = 0;
      engine.readBlocks = async (...args) => {
        most = Math.max(most, ++held);
        try {
          return await readBlocks(...args);
        } finally {
          held--;
        }
      };
      const doc = await readDocument(engine, pdfOfImages(Array.from({ length: pages }, () => strip)), 'strips.pdf');
      assert.equal(doc.pages.length, pages);
      assert.ok(
        doc.pages.every((p) => p.markdown.length > 10),
        'every page read',
      );
      assert.equal(new Set(doc.pages.map((p) => p.markdown)).size, 1, 'the same strip reads the same on every page');
      assert.ok(most <= PAGES_AHEAD, `${most} pages were with the engine at once`);
    } finally {
      await engine.close();
    }
  });
});

describe('cancelling a document', () => {
  it('stops lines that are still decoding after the last page was submitted', async () => {
    const engine = await Engine.open();
    try {
      const sample = readFileSync(SAMPLE_PAGE);
      const pdf = pdfOfImages([sample, sample, sample]);
      const ctrl = new AbortController();
      let tokens = 0;
      const reading = readDocument(engine, pdf, 'three.pdf', {
        signal: ctrl.signal,
        onTokens: () => {
          // Pages are all submitted before decoding gets far: cancel well into the run.
          if (++tokens === 40) ctrl.abort();
        },
      });
      await assert.rejects(reading, (e: unknown) => e instanceof EngineError && e.code === 'CANCELLED');
      assert.ok(tokens < 40 + 48 * 3, `decoding stopped soon after the cancel (${tokens} token events)`);
      assert.equal(engine.stats.active, 0, 'no line of the document is left in the batch');
    } finally {
      await engine.close();
    }
  });
});

describe('pages that are not black on white', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  it('text on a grey gradient and white text on a dark panel read as the same text on white paper', async () => {
    const { data, info } = await sharp(readFileSync(SAMPLE_PAGE))
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { width, height } = info;
    const out = Buffer.from(data);
    // The panel starts between two printed lines: the first blank row past the middle.
    let half = height >> 1;
    while (half < height && data.subarray(half * width, (half + 1) * width).some((p) => p < 200)) half++;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const p = data[y * width + x];
        // Upper half: paper shading from white to grey 200 across the page. Lower half: a grey-130 panel, text in
        // white.
        out[y * width + x] =
          y < half ? Math.round((p * (255 - (55 * x) / width)) / 255) : 130 + Math.round(((255 - p) * 125) / 255);
      }
    }
    const shaded = await sharp(out, { raw: { width, height, channels: 1 } })
      .png()
      .toBuffer();
    const plain = await readDocument(engine, readFileSync(SAMPLE_PAGE), 'sample-page.png');
    const read = await readDocument(engine, shaded, 'shaded.png');
    // The lines as read, the unreadable one among them (the markdown and text show it as a gap; reading-trust.ts).
    const asRead = read.pages
      .map((p) =>
        p.blocks
          .filter((b) => b.lines.length)
          .map((b) => b.lines.map((l) => l.text).join('\n'))
          .join('\n\n'),
      )
      .join('\n\n');
    const cer = corpusCer([tally(asRead, plain.text)]);
    assert.ok(read.unreadableLines <= 1, `${read.unreadableLines} lines unreadable`);
    assert.ok(plain.text.length > 500);
    // Flattening leaves the panel's first line half unturned where the shading above it is darkest (its cells
    // along the edge get no background: two tones in their window), and every model misreads that half line:
    // 2.80% with the step-13000 model, 3.41% with step 17180's. The bound holds the rest of the page to the white
    // page's reading; the edge itself is an open flattening fault, not this test's subject (that line is now marked
    // unreadable, at most that one).
    assert.ok(cer < 0.04, `CER against the white page's reading: ${(cer * 100).toFixed(2)}%\n${read.text}`);
  });
});

describe('boxes in the image as it came', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  it('small print: a page a third its size reads as at full size, every box in its own pixels', async () => {
    const full = readFileSync(SAMPLE_PAGE);
    const small = await sharp(full).resize({ width: 413 }).png().toBuffer();
    const big = await readDocument(engine, full, 'sample-page.png');
    const read = await readDocument(engine, small, 'small.png');
    const page = read.pages[0];
    assert.deepEqual([page.width, page.height], [413, 333], "the page's size is the image's");
    const lines = (doc: typeof read) => doc.pages[0].blocks.flatMap((b) => b.lines);
    const ours = lines(read);
    const theirs = lines(big);
    assert.equal(ours.length, theirs.length, 'the same lines as at full size');
    ours.forEach((l, i) => {
      const mid = l.box.y + l.box.height / 2;
      const want = (theirs[i].box.y + theirs[i].box.height / 2) * (413 / 1240);
      assert.ok(l.box.x >= 0 && l.box.x + l.box.width <= 413 && l.box.y + l.box.height <= 333, 'inside the image');
      assert.ok(Math.abs(mid - want) <= 3, `line ${i} at y ${mid.toFixed(1)}, at full size ${want.toFixed(1)}`);
    });
    const cer = corpusCer([tally(read.text, big.text)]);
    assert.ok(cer < 0.04, `CER against the full-size reading: ${(cer * 100).toFixed(2)}%`);
  });

  it("a table on a page scanned on its side: each cell's box in the page as it came, within its table's", async () => {
    const turned = await sharp(readFileSync(join(ROOT, 'test', 'fixtures', 'table-ruled.png')))
      .rotate(90)
      .png()
      .toBuffer();
    const read = await readDocument(engine, turned, 'turned.png');
    const page = read.pages[0];
    assert.equal(page.rotation, 270, 'read after a quarter turn back');
    const table = page.blocks.find((b) => b.type === 'table');
    assert.ok(table?.table?.cellBoxes, 'a table with its cells found');
    const { box } = table;
    const boxes = table.table.cellBoxes.flat().filter((b) => b !== null);
    assert.ok(boxes.length >= 20, `${boxes.length} cells with text`);
    for (const c of boxes) {
      // A cell's box holds its line's crop, padded past the ink the table's box is cut to.
      const pad = 8;
      const inside =
        c.x >= box.x - pad &&
        c.y >= box.y - pad &&
        c.x + c.width <= box.x + box.width + pad &&
        c.y + c.height <= box.y + box.height + pad;
      assert.ok(inside, `cell ${JSON.stringify(c)} outside its table ${JSON.stringify(box)}`);
      assert.ok(c.height > c.width, 'a turned line is taller than wide');
    }
  });
});
