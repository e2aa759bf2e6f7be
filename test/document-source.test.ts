import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { decodeImage } from '../src/document/decode-image.js';
import { deskew, estimateSkew } from '../src/document/deskew.js';
import { DocumentError } from '../src/document/errors.js';
import { findLines } from '../src/document/layout/lines.js';
import { parsePageRange } from '../src/document/page-range.js';
import { openSource } from '../src/document/source.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';
import { blankPdf, emptyPdf, pdfOfImages } from './helpers/pdfs.js';

const sample = readFileSync(SAMPLE_PAGE);

const refused = (p: Promise<unknown>, code: string, file: string) =>
  assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof DocumentError, `expected a DocumentError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.ok(e.message.includes(file));
    return true;
  });

describe('page ranges', () => {
  it('read "0,2-4" as pages 0, 2, 3, 4, in order, duplicates folded', () => {
    assert.deepEqual(parsePageRange('3-4, 0,2-3', 10, 'x'), [0, 2, 3, 4]);
  });
  it('refuse malformed, backwards and out-of-range ranges with typed errors', () => {
    assert.throws(
      () => parsePageRange('1-', 10, 'x'),
      (e: unknown) => e instanceof DocumentError && e.code === 'INVALID_PAGE_RANGE',
    );
    assert.throws(
      () => parsePageRange('4-2', 10, 'x'),
      (e: unknown) => e instanceof DocumentError && e.code === 'INVALID_PAGE_RANGE',
    );
    assert.throws(
      () => parsePageRange('0,10', 10, 'x'),
      (e: unknown) => e instanceof DocumentError && e.code === 'PAGE_OUT_OF_RANGE' && /0-9/.test(e.message),
    );
  });
});

describe('documents open as pages, sniffed by their bytes', () => {
  it('every page of a multi-page TIFF is read', async () => {
    const gray = await sharp(sample).grayscale().png().toBuffer();
    const tiff = await sharp([gray, gray, gray], { join: { animated: true } })
      .tiff()
      .toBuffer();
    const src = await openSource(tiff, 'scan.tif');
    assert.equal(src.format, 'tiff');
    assert.equal(src.pageCount, 3);
    assert.deepEqual(src.pages, [0, 1, 2]);
    const page = await src.render(2);
    assert.equal(page.height, 1000, 'one page, not the whole stack');
    assert.equal(findLines(page).length, 16);
  });

  it('a PDF reads only the pages of its range', async () => {
    const pdf = pdfOfImages([sample, sample, sample, sample]);
    const src = await openSource(pdf, 'report.bin', '1,3');
    assert.equal(src.format, 'pdf', 'sniffed from the bytes, whatever the name');
    assert.equal(src.pageCount, 4);
    assert.deepEqual(src.pages, [1, 3]);
    const page = await src.render(3);
    assert.ok(page.width > 1000 && page.height > 800);
    assert.equal(findLines(page).length, 16);
    assert.equal(src.textLayer(3), null, 'an image-only PDF has no text layer');
    src.close();
    src.close();
    await assert.rejects(src.render(1), /closed/, 'a closed source has freed its document');
  });

  it('a corrupt PDF is CORRUPT_PDF', () =>
    refused(openSource(Buffer.from('%PDF-1.7\nnot really a pdf\n'), 'broken.pdf'), 'CORRUPT_PDF', 'broken.pdf'));
  it("a PDF cut in half (its pages' objects lost) is CORRUPT_PDF when read, not a blank success", async () => {
    const pdf = pdfOfImages([sample, sample]);
    const cut = pdf.subarray(0, Math.floor(pdf.length / 2));
    const src = await openSource(cut, 'cut.pdf');
    try {
      await refused(src.render(src.pages[0]), 'CORRUPT_PDF', 'cut.pdf');
    } finally {
      src.close();
    }
    // A whole PDF's blank pages are just blank.
    const blank = await openSource(blankPdf(2), 'blank.pdf');
    try {
      assert.ok((await blank.render(0)).data.every((v) => v >= 128));
    } finally {
      blank.close();
    }
  });
  it('a JPEG whose scan data is random is CORRUPT_IMAGE, not noise read as a page', async () => {
    const jpeg = Buffer.from(await sharp(sample).jpeg().toBuffer());
    // Keep the headers and tables (the first 700 bytes) and the end marker; randomise the entropy-coded data.
    let x = 12345;
    for (let i = 700; i < jpeg.length - 100; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      jpeg[i] = x >> 16;
    }
    await refused(decodeImage(jpeg, 'noise.jpg'), 'CORRUPT_IMAGE', 'noise.jpg');
  });
  it('an encrypted PDF is ENCRYPTED_PDF', () =>
    refused(openSource(pdfOfImages([sample], { encrypt: true }), 'locked.pdf'), 'ENCRYPTED_PDF', 'locked.pdf'));
  it('a PDF without pages is EMPTY_DOCUMENT', () =>
    refused(openSource(emptyPdf(), 'empty.pdf'), 'EMPTY_DOCUMENT', 'empty.pdf'));
  it('a 10,000-page PDF is refused whole, and read when ranged', async () => {
    const pdf = blankPdf(10_000);
    await refused(openSource(pdf, 'huge.pdf'), 'TOO_MANY_PAGES', 'huge.pdf');
    const src = await openSource(pdf, 'huge.pdf', '9998-9999');
    assert.equal(src.pageCount, 10_000);
    assert.deepEqual(src.pages, [9998, 9999]);
    const page = await src.render(9999);
    assert.equal(page.width, Math.ceil((100 * 200) / 72), 'a 100 pt page at 200 dpi');
    assert.ok(
      page.data.every((p) => p === 255),
      'blank',
    );
  });
  it('an empty file and a text file are refused by their bytes', async () => {
    await refused(openSource(new Uint8Array(0), 'nothing.pdf'), 'EMPTY_INPUT', 'nothing.pdf');
    await refused(openSource(Buffer.from('hello'), 'notes.pdf'), 'UNSUPPORTED_FORMAT', 'notes.pdf');
  });
});

describe('small skew', () => {
  for (const angle of [1.5, -2]) {
    it(`a page scanned ${angle} degrees crooked is measured and straightened`, async () => {
      const crooked = await sharp(sample).rotate(angle, { background: '#ffffff' }).png().toBuffer();
      const page = await decodeImage(crooked, 'crooked.png');
      assert.ok(Math.abs(estimateSkew(page) - angle) <= 0.2, `estimated ${estimateSkew(page)}`);
      const straight = await deskew(page);
      assert.ok(Math.abs(estimateSkew(straight.page)) <= 0.2);
      assert.equal(findLines(straight.page).length, 16);
    });
  }
  it('a straight page is left alone', async () => {
    const page = await decodeImage(sample, 'straight.png');
    assert.equal((await deskew(page)).degrees, 0);
  });
});
