import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { decodeImage } from '../src/document/decode-image.js';
import { DocumentError } from '../src/document/errors.js';
import { findLines } from '../src/document/layout/lines.js';
import { hugePngHeader, SAMPLE_PAGE, SAMPLE_TEXT } from './helpers/fixtures.js';

const rejects = (bytes: Uint8Array, file: string, code: string) =>
  assert.rejects(decodeImage(bytes, file), (e: unknown) => {
    assert.ok(e instanceof DocumentError, `expected a DocumentError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.file, file);
    assert.ok(e.message.includes(file), 'the message names the file');
    return true;
  });

describe('bad page inputs get typed errors that name the file', () => {
  it('an empty file is EMPTY_INPUT', () => rejects(new Uint8Array(0), 'empty.png', 'EMPTY_INPUT'));
  it('a text file named .png is UNSUPPORTED_FORMAT', () =>
    rejects(Buffer.from('this is not an image\n'), 'notes.png', 'UNSUPPORTED_FORMAT'));
  it('a truncated PNG is CORRUPT_IMAGE', () => {
    const png = readFileSync(SAMPLE_PAGE);
    return rejects(png.subarray(0, Math.floor(png.length / 3)), 'truncated.png', 'CORRUPT_IMAGE');
  });
  it('a PNG whose header is garbage is CORRUPT_IMAGE', () => {
    const png = Buffer.from(readFileSync(SAMPLE_PAGE));
    png.fill(0xab, 8, 64);
    return rejects(png, 'garbled.png', 'CORRUPT_IMAGE');
  });
  it('a 30000x30000 image is IMAGE_TOO_LARGE, refused from its header alone', () =>
    rejects(hugePngHeader(30000, 30000), 'huge.png', 'IMAGE_TOO_LARGE'));
  it('a 1x1 image is IMAGE_TOO_SMALL', () => rejects(hugePngHeader(1, 1), 'dot.png', 'IMAGE_TOO_SMALL'));
});

describe('the line finder on a clean one-column page', () => {
  it('finds every printed line, top to bottom', async () => {
    const page = await decodeImage(readFileSync(SAMPLE_PAGE), 'sample-page.png');
    const boxes = findLines(page);
    const truth = readFileSync(SAMPLE_TEXT, 'utf8').trim().split('\n');
    assert.equal(boxes.length, truth.length);
    for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i].y > boxes[i - 1].y, 'boxes come in reading order');
    for (const b of boxes) {
      assert.ok(b.height >= 15 && b.height < 80, `a line box is one line tall (${b.height}px)`);
      assert.ok(b.x >= 0 && b.x + b.width <= page.width);
    }
  });
});
