import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSource } from '../src/document/source.js';
import { Engine } from '../src/engine/engine.js';
import { readDocument } from '../src/worker/read-document.js';
import { pdfWithText } from './helpers/pdfs.js';

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

  it('offers its text layer to the reference drafter, which then drafts from it; the answer is still read from pixels', async () => {
    const pdf = pdfWithText(LINES);
    const plain = await readDocument(engine, pdf, 'digital.pdf');
    const ref = await readDocument(engine, pdf, 'digital.pdf', { decoding: { drafter: 'reference', verifier: 'greedy', draftLength: 16 } });
    assert.equal(ref.text, plain.text, 'lossless: the same text as plain decoding');
    assert.ok(ref.metrics.draftTokens > 0, 'the text layer was drafted from');
    assert.equal(plain.pages[0].blocks.flatMap((b) => b.lines).length, LINES.length);
  });
});
