/**
 * A table region's grid on pages drawn pixel by pixel (glyphs are ring-shaped blocks: the grid sees only ink, so the
 * cases need no font): where its cells are cut and where they are not; and a table in small print.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { decodeImage, type GrayPage } from '../src/document/decode-image.js';
import { analyzeLayout } from '../src/document/layout/analyze.js';
import { smallPrintLayout } from '../src/document/layout/small-print.js';
import { binarize, inkThreshold } from '../src/document/layout/ink.js';
import { lineBands } from '../src/document/layout/lines.js';
import { join } from 'node:path';
import { ROOT } from './helpers/fixtures.js';
import { tableGrid } from '../src/document/layout/table-grid.js';

const LH = 14;
const ROW_PITCH = 30;

/** A white page with a glyph-drawing pen. */
function blankPage(width: number, height: number): GrayPage & { glyph(x: number, y: number): number } {
  const data = new Uint8Array(width * height).fill(255);
  const glyph = (x: number, y: number): number => {
    // A 7 x LH ring, strokes 2 px wide: a "0".
    for (let dy = 0; dy < LH; dy++)
      for (let dx = 0; dx < 7; dx++) if (dx < 2 || dx > 4 || dy < 2 || dy > LH - 3) data[(y + dy) * width + x + dx] = 0;
    return x + 9;
  };
  return { width, height, data, glyph };
}

/** A dash 10 px wide, 2 px tall, at mid-height of a line at y, of grey `shade`. */
function dash(page: GrayPage, x: number, y: number, shade: number): number {
  for (let dy = 6; dy < 8; dy++) for (let dx = 0; dx < 10; dx++) page.data[(y + dy) * page.width + x + dx] = shade;
  return x + 10;
}

/**
 * Four rows of three columns: a label of four glyphs, a range (two glyphs, a dash `space` px from each, two glyphs;
 * the figures further apart than a word space) or, in row `placeholderRow`, a lone dash standing for an empty cell,
 * and a figure of two glyphs.
 */
function rangeTable(shade: (page: GrayPage) => number, space: number, placeholderRow = -1): GrayPage {
  const page = blankPage(420, 4 * ROW_PITCH + 20);
  for (let r = 0; r < 4; r++) {
    const y = 10 + r * ROW_PITCH;
    let x = 10;
    for (let k = 0; k < 4; k++) x = page.glyph(x, y);
    if (r === placeholderRow) dash(page, 180, y, shade(page));
    else {
      x = page.glyph(page.glyph(150, y), y);
      x = dash(page, x + space, y, shade(page)) + space;
      page.glyph(page.glyph(x, y), y);
    }
    page.glyph(page.glyph(350, y), y);
  }
  return page;
}

function gridOf(page: GrayPage) {
  const region = { x: 0, y: 0, width: page.width, height: page.height };
  const ink = binarize(page);
  return tableGrid(ink, lineBands(ink, region, LH), LH, page, region);
}

describe("a table's grid", () => {
  it('keeps a range whose dash is ink ("50 – 60") in one cell, not three columns', () => {
    const grid = gridOf(rangeTable(() => 0, LH));
    assert.equal(grid.cols, 3);
    for (const row of grid.cells) {
      assert.equal(row[1].length, 1, 'the range is one line');
      assert.ok(row[1][0].band.width > 60, `the line holds both figures: ${row[1][0].band.width} px`);
    }
  });

  it('keeps a range whose dash is lighter than the ink threshold (a small render) in one cell', () => {
    // The dash's grey: past the ink threshold, as anti-aliasing draws a thin stroke.
    const faint = (page: GrayPage): number => Math.round(inkThreshold(page) + (255 - inkThreshold(page)) / 5);
    const page = rangeTable(faint, LH / 2);
    assert.ok(faint(page) > inkThreshold(page), 'the dash is not ink');
    const grid = gridOf(page);
    assert.equal(grid.cols, 3);
    for (const row of grid.cells) assert.equal(row[1].length, 1, 'the range is one line');
  });

  it('leaves a dash with a gutter on both sides (an empty cell) apart from its neighbours', () => {
    const grid = gridOf(rangeTable(() => 0, LH, 2));
    assert.equal(grid.cols, 3);
    assert.equal(grid.cells[2][0].length, 1);
    assert.ok(grid.cells[2][0][0].band.width < 40, 'the label did not take in the dash');
    assert.ok(grid.cells[2][2][0].band.x >= 350, 'the figure did not take in the dash');
  });
});

describe('a table in small print', () => {
  it('has the grid it has at full size, its boxes in its own pixels', async () => {
    // The ruled table fixture at a quarter of its size: lines 5 px tall, hairline rules and strokes grey.
    const full = readFileSync(join(ROOT, 'test', 'fixtures', 'table-ruled.png'));
    const small = await sharp(full).resize({ width: 310 }).png().toBuffer();
    const page = await decodeImage(small, 'small.png');
    const grid = (blocks: { table?: { rows: number; cols: number } }[]) =>
      blocks.filter((b) => b.table).map((b) => [b.table?.rows, b.table?.cols]);
    const want = grid(analyzeLayout(await decodeImage(full, 'table-ruled.png')).blocks);
    const layout = await smallPrintLayout(page);
    assert.deepEqual(grid(layout.blocks), want);
    assert.deepEqual([layout.width, layout.height], [page.width, page.height]);
    for (const l of layout.blocks.flatMap((b) => b.lines))
      assert.ok(l.box.x >= 0 && l.box.x + l.box.width <= page.width && l.box.y + l.box.height <= page.height);
  });
});
