/**
 * Layout on pages our generator rendered (test/fixtures, made by training/make_page.py, with their truth in
 * .json): reading order, block types, tables; and the markdown assembly of known line texts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { assemblePage, isPageNumber, reflow, tableMarkdown, type LineOut } from '../src/document/assemble.js';
import { decodeImage } from '../src/document/decode-image.js';
import { flattenBackground } from '../src/document/flatten.js';
import { analyzeLayout, type PageLayout, type TableSpan } from '../src/document/layout/analyze.js';
import {
  binarize,
  columnInk,
  firstInk,
  type InkMap,
  inkOf,
  inkThreshold,
  lastInk,
  type Rule,
  wordsOf,
} from '../src/document/layout/ink.js';
import { removeRules } from '../src/document/layout/rule-runs.js';
import { findLines, rowProfile } from '../src/document/layout/lines.js';
import { foldCurrencyColumns } from '../src/document/table-text.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';

type Rect = [number, number, number, number];

interface Truth {
  blocks: {
    type: string;
    box: Rect;
    lines: string[];
    line_boxes?: Rect[];
    cells?: string[][];
    cell_boxes?: Rect[][];
    grid?: [string, number, boolean][][];
  }[];
}

const fixture = (name: string): string => join(ROOT, 'test', 'fixtures', name);
const truthOf = (name: string): Truth =>
  JSON.parse(readFileSync(fixture(name.replace('.png', '.json')), 'utf8')) as Truth;
const layoutOf = async (path: string): Promise<PageLayout> =>
  analyzeLayout(await decodeImage(readFileSync(path), path));

/** Which truth block holds the centre of this box? */
function truthIndex(truth: Truth, b: { x: number; y: number; width: number; height: number }): number {
  const cx = b.x + b.width / 2;
  const cy = b.y + b.height / 2;
  return truth.blocks.findIndex(
    ({ box: [x, y, w, h] }) => cx >= x - 4 && cx <= x + w + 4 && cy >= y - 4 && cy <= y + h + 4,
  );
}

/** The printed text at a line box's centre (as if the model read perfectly), to test assembly on its own. */
function truthAt(truth: Truth, b: { x: number; y: number; width: number; height: number }): string {
  const cx = b.x + b.width / 2;
  const cy = b.y + b.height / 2;
  const inside = ([x, y, w, h]: Rect): boolean => cx >= x - 4 && cx <= x + w + 4 && cy >= y - 4 && cy <= y + h + 4;
  for (const t of truth.blocks) {
    const i = (t.line_boxes ?? []).findIndex(inside);
    if (i >= 0) return t.lines[i];
    for (const [r, row] of (t.cell_boxes ?? []).entries()) {
      const c = row.findIndex(inside);
      if (c >= 0) return t.cells?.[r]?.[c] ?? '';
    }
  }
  return '';
}

function truthTexts(layout: PageLayout, truth: Truth): LineOut[][] {
  return layout.blocks.map((b) => b.lines.map((l) => ({ box: l.box, text: truthAt(truth, l.band) })));
}

describe('reading order', () => {
  it('a two-column page is read column by column, each top to bottom', async () => {
    const truth = truthOf('two-column.png');
    const layout = await layoutOf(fixture('two-column.png'));
    const order = layout.blocks.map((b) => truthIndex(truth, b.box));
    assert.ok(
      order.every((i) => i >= 0),
      'every block is a printed block',
    );
    assert.deepEqual(
      order,
      truth.blocks.map((_, i) => i),
      'heading, left column, right column',
    );
    assert.equal(layout.blocks[0].type, 'heading');
  });

  it(
    'a photo across a narrow gutter leaves the columns apart, and its ' + 'caption between them is read on its own',
    async () => {
      // Magazine setting: a gutter under a line height, a halftone across it, text wrapped around it, the caption
      // centred below it between the columns, a scanner's dark edge at the foot.
      const truth = truthOf('magazine.png');
      const layout = await layoutOf(fixture('magazine.png'));
      const order = layout.blocks.map((b) => truthIndex(truth, b.box));
      const [heading, figure, caption, left, right] = [0, 1, 2, 3, 4];
      assert.deepEqual(
        order,
        [heading, left, figure, caption, right],
        'heading, left column, the photo and its caption, right column',
      );
      layout.blocks.forEach((b, i) => {
        const from = new Set(
          b.lines.map((l) =>
            truth.blocks.findIndex((t) =>
              (t.line_boxes ?? []).some(
                ([x, y, w, h]) =>
                  l.band.x < x + w && x < l.band.x + l.band.width && l.band.y < y + h && y < l.band.y + l.band.height,
              ),
            ),
          ),
        );
        assert.ok(
          from.size <= 1 && !from.has(-1),
          `block ${i} holds lines of one printed block only, got ${[...from]}`,
        );
      });
      const fig = layout.blocks.find((b) => b.type === 'figure');
      const [fx, fy, fw, fh] = truth.blocks[figure].box;
      assert.ok(
        fig &&
          Math.abs(fig.box.x - fx) < 12 &&
          Math.abs(fig.box.y - fy) < 12 &&
          Math.abs(fig.box.width - fw) < 24 &&
          Math.abs(fig.box.height - fh) < 24,
        "the figure has the photo's box",
      );
      assert.equal(
        layout.blocks[3].lines.length,
        truth.blocks[caption].lines.length,
        'every caption line, and only those',
      );
    },
  );

  it('blocks of a one-column page come top to bottom with the same lines as printed', async () => {
    const truth = truthOf('article.png');
    const layout = await layoutOf(fixture('article.png'));
    const lines = layout.blocks.flatMap((b) => b.lines);
    assert.equal(
      lines.length,
      truth.blocks.reduce((n, b) => n + b.lines.length, 0),
    );
    for (let i = 1; i < lines.length; i++) assert.ok(lines[i].box.y > lines[i - 1].box.y);
  });
});

describe('block types', () => {
  it('an article has a running header, headings, a list, paragraphs and a page number', async () => {
    const truth = truthOf('article.png');
    const layout = await layoutOf(fixture('article.png'));
    const page = assemblePage(0, layout, truthTexts(layout, truth));
    const types = page.blocks.map((b) => b.type);
    assert.equal(types[0], 'page_header');
    assert.deepEqual(types.filter((t) => t === 'heading').length, 2);
    assert.equal(types.filter((t) => t === 'list_item').length, 3);
    assert.equal(types[types.length - 1], 'page_number');
    assert.match(page.markdown, /^Journal of Synthetic Documents/);
    assert.match(page.markdown, /\n- /);
    const dropped = assemblePage(0, layout, truthTexts(layout, truth), { dropHeadersFooters: true });
    assert.doesNotMatch(dropped.markdown, /Journal of Synthetic Documents/);
    assert.ok(
      !dropped.markdown.trim().endsWith(truth.blocks[truth.blocks.length - 1].lines[0]),
      'the page number is dropped',
    );
    assert.ok(
      dropped.blocks.some((b) => b.type === 'page_number'),
      'but stays in the block tree, flagged',
    );
  });

  it('a hyphenated line end is joined when the paragraph is reflowed', async () => {
    const truth = truthOf('article.png');
    const layout = await layoutOf(fixture('article.png'));
    const page = assemblePage(0, layout, truthTexts(layout, truth));
    const broken = truth.blocks.flatMap((b) => b.lines).find((l) => /\p{L}-$/u.test(l));
    assert.ok(broken, 'the fixture has a hyphenated line');
    const word = broken.split(' ').pop()?.slice(0, -1) ?? '';
    assert.ok(
      page.markdown.includes(word) && !page.markdown.includes(`${word}- `) && !page.markdown.includes(`${word}-\n`),
    );
    assert.equal(reflow(['an exam-', 'ple of it']), 'an example of it');
    assert.equal(
      reflow(['the Franco-', 'Prussian war']),
      'the Franco- Prussian war',
      'a capital after the hyphen keeps it',
    );
  });

  for (const name of ['table.png', 'table-ruled.png']) {
    it(`aligned columns${name.includes('ruled') ? ' between rules' : ''} come out as a markdown table`, async () => {
      const truth = truthOf(name);
      const layout = await layoutOf(fixture(name));
      const tables = layout.blocks.filter((b) => b.type === 'table');
      assert.equal(tables.length, 1);
      const want = truth.blocks.find((b) => b.type === 'table')?.cells ?? [];
      assert.equal(tables[0].table?.rows, want.length);
      assert.equal(tables[0].table?.cols, want[0].length);
      const page = assemblePage(0, layout, truthTexts(layout, truth));
      const md = page.blocks.find((b) => b.type === 'table')?.markdown ?? '';
      assert.equal(md, tableMarkdown(want));
      assert.equal(md.split('\n').length, want.length + 1);
      assert.ok(page.blocks.filter((b) => b.type === 'paragraph').length >= 2, 'the text around it stays paragraphs');
    });
  }

  it(
    "a financial statement's table is one table: its headings over the " +
      'columns they head, currency signs with their figures, wrapped labels ' +
      'in one cell',
    async () => {
      const truth = truthOf('statement.png');
      const layout = await layoutOf(fixture('statement.png'));
      const tables = layout.blocks.filter((b) => b.type === 'table');
      assert.equal(tables.length, 1, 'the headings set apart from the body are part of the table');
      const page = assemblePage(0, layout, truthTexts(layout, truth));
      const block = page.blocks.find((b) => b.type === 'table');
      // The printed grid (a column of its own for each "$"), laid out with its spans, then the signs folded in.
      const grid = truth.blocks.find((b) => b.type === 'table')?.grid ?? [];
      const cells: string[][] = [];
      const spans: TableSpan[] = [];
      grid.forEach((row, r) => {
        cells.push([]);
        for (const [text, span] of row) {
          if (span > 1) spans.push({ row: r, col: cells[r].length, rowSpan: 1, colSpan: span });
          cells[r].push(text, ...Array<string>(span - 1).fill(''));
        }
      });
      const want = foldCurrencyColumns({
        cells,
        spans,
        headerRows: grid.filter((row) => row.every(([, , head]) => head)).length,
      });
      assert.deepEqual(block?.cells, want.cells);
      const { cellBoxes, ...structure } = block?.table ?? { cellBoxes: undefined };
      assert.deepEqual(structure, {
        rows: want.cells.length,
        columns: want.cells[0].length,
        headerRows: 3,
        spans: want.spans,
      });
      // Each cell holding text has its ink's box (a folded currency sign's taken in with its figure's).
      assert.deepEqual(
        cellBoxes?.map((row) => row.map((b) => b !== null)),
        want.cells.map((row) => row.map((t) => t !== '')),
      );
      assert.deepEqual(
        want.spans,
        [{ row: 0, col: 1, rowSpan: 1, colSpan: 3 }],
        '"Year Ended" over the three dated columns',
      );
      assert.match(block?.markdown ?? '', /^<table>\n<thead>\n<tr><th><\/th><th colspan="3">/);
      assert.match(block?.markdown ?? '', /<td>\$[\d,]+<\/td>/, 'a figure with its currency sign');
    },
  );

  it(
    'a data table with a shaded band and labels on several lines is one ' +
      'table: each label one cell, beside its figures',
    async () => {
      const truth = truthOf('grouped.png');
      const layout = await layoutOf(fixture('grouped.png'));
      const tables = layout.blocks.filter((b) => b.type === 'table');
      assert.equal(tables.length, 1);
      const block = assemblePage(0, layout, truthTexts(layout, truth)).blocks.find((b) => b.type === 'table');
      const grid = truth.blocks.find((b) => b.type === 'table')?.grid ?? [];
      assert.equal(block?.table?.headerRows, 1);
      // Every row but the band's as printed: a label of two or three lines (figures level with its first or its
      // middle line) is one cell.
      const rows = (block?.cells ?? []).filter((_, r) => r !== 1);
      assert.deepEqual(
        rows,
        grid.filter((_, r) => r !== 1).map((row) => row.map(([text]) => text)),
      );
      // The band: one cell on a row of its own, over more than one column. (Its printed span is the shading's width,
      // which flattening takes away; the words' own width gives fewer columns than the shading did.)
      const band = block?.cells?.[1] ?? [];
      assert.deepEqual(band.filter(Boolean), [grid[1][1][0]]);
      assert.ok(block?.table?.spans.some((s) => s.row === 1 && s.colSpan > 1));
    },
  );

  it(
    'a line of large bold type is one heading line, not a table of its ' + 'words nor pictures of its letters',
    async () => {
      // The sample page's bold heading ("Return Self") three times its size, above the page.
      const sample = readFileSync(SAMPLE_PAGE);
      const big = await sharp(sample)
        .extract({ left: 120, top: 128, width: 186, height: 33 })
        .resize({ width: 3 * 186 })
        .png()
        .toBuffer();
      const png = await sharp(sample)
        .extend({ top: 160, background: '#ffffff' })
        .composite([{ input: big, left: 120, top: 30 }])
        .png()
        .toBuffer();
      const layout = analyzeLayout(await decodeImage(png, 'title.png'));
      const top = layout.blocks.filter((b) => b.box.y < 160);
      assert.deepEqual(
        top.map((b) => b.type),
        ['heading'],
      );
      assert.equal(top[0].lines.length, 1);
      const { x, width } = top[0].lines[0].band;
      assert.ok(x < 150 && x + width > 650, `the line spans the whole title: ${x}..${x + width}`);
    },
  );

  it(
    'a title of two lines of large type is one heading, not a table of its ' +
      'words, even where its word spaces line up',
    async () => {
      // Two lines of three "words" each: stretches of the sample page's body text at three times their size, the
      // spaces of the two lines one above the other (the page's own glyphs: no font needed).
      const sample = readFileSync(SAMPLE_PAGE);
      const [, a, b] = findLines(await decodeImage(sample, 'sample.png'));
      const word = (box: { x: number; y: number; height: number }, k: number): Promise<Buffer> =>
        sharp(sample)
          .extract({ left: box.x + 8 + 110 * k, top: box.y, width: 100, height: box.height })
          .resize({ width: 300 })
          .png()
          .toBuffer();
      const h = 3 * a.height;
      const composite = [];
      for (let k = 0; k < 3; k++) {
        composite.push({ input: await word(a, k), left: 140 + 340 * k, top: 20 });
        composite.push({ input: await word(b, k), left: 140 + 340 * k, top: 20 + h - 12 });
      }
      const png = await sharp(sample)
        .extend({ top: 2 * h + 60, background: '#ffffff' })
        .composite(composite)
        .png()
        .toBuffer();
      const layout = analyzeLayout(await decodeImage(png, 'title.png'));
      const top = layout.blocks.filter((blk) => blk.box.y < 2 * h + 40);
      assert.deepEqual(
        top.map((blk) => blk.type),
        ['heading'],
      );
      assert.equal(top[0].lines.length, 2, 'its two lines, top to bottom');
    },
  );

  it('a picture is a figure block with its box, not read as text', async () => {
    const noise = Buffer.alloc(400 * 300);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919 + ((i / 400) | 0) * 104729) % 251 > 125 ? 0 : 255;
    const png = await sharp(readFileSync(SAMPLE_PAGE))
      .extend({ bottom: 400, background: '#ffffff' })
      .composite([{ input: noise, raw: { width: 400, height: 300, channels: 1 }, left: 400, top: 1050 }])
      .png()
      .toBuffer();
    const layout = analyzeLayout(await decodeImage(png, 'figure.png'));
    const figures = layout.blocks.filter((b) => b.type === 'figure');
    assert.equal(figures.length, 1);
    assert.ok(Math.abs(figures[0].box.x - 400) < 5 && Math.abs(figures[0].box.y - 1050) < 5);
    assert.equal(figures[0].lines.length, 0);
    const page = assemblePage(
      0,
      layout,
      layout.blocks.map((b) => b.lines.map((l) => ({ box: l.box, text: 'x' }))),
    );
    assert.match(page.markdown, /<!-- image -->/);
  });
});

describe('text-level block types', () => {
  const box = { x: 0, y: 0, width: 100, height: 20 };
  const layout = (type: 'paragraph' | 'page_footer', n: number): PageLayout => ({
    width: 1000,
    height: 1000,
    lineHeight: 20,
    rules: [],
    blocks: [{ type, box, lines: Array.from({ length: n }, () => ({ box, band: box })) }],
  });
  const lines = (...texts: string[]): LineOut[][] => [texts.map((text) => ({ box, text }))];

  it('numbered lines become an ordered list, whatever the marker style', () => {
    const page = assemblePage(0, layout('paragraph', 3), lines('1) Apples', '(2) Pears', '3. Plums'));
    assert.deepEqual(
      page.blocks.map((b) => b.markdown),
      ['1. Apples', '2. Pears', '3. Plums'],
    );
    assert.equal(page.markdown, '1. Apples\n2. Pears\n3. Plums');
  });
  it('a continuation line stays in its list item', () => {
    const page = assemblePage(
      0,
      layout('paragraph', 3),
      lines('• first point that is long and', 'wraps onto a second line', '• second point'),
    );
    assert.deepEqual(
      page.blocks.map((b) => b.markdown),
      ['- first point that is long and wraps onto a second line', '- second point'],
    );
  });
  it('page numbers are numbers, not words that look like numerals', () => {
    for (const t of ['12', 'Page 3 of 9', 'iv', 'XII', '7 / 20']) assert.ok(isPageNumber(t), t);
    for (const t of ['Mix', 'Did', 'MD', 'Civil', 'Chapter 2 Methods', 'xIi']) assert.ok(!isPageNumber(t), t);
    assert.equal(assemblePage(0, layout('page_footer', 1), lines('Did')).blocks[0].type, 'page_footer');
    assert.equal(assemblePage(0, layout('page_footer', 1), lines('xiv')).blocks[0].type, 'page_number');
  });
});

describe('page background', () => {
  const samplePage = async () => decodeImage(readFileSync(SAMPLE_PAGE), 'sample-page.png');

  it('clean paper is left exactly as it is', async () => {
    const page = await samplePage();
    assert.equal(flattenBackground(page), page);
  });

  it('light text on a dark panel becomes dark text on white, and the panel goes', async () => {
    const page = await samplePage();
    const data = Uint8Array.from(page.data);
    const half = page.height >> 1;
    // The lower half as a panel of grey 130 with the text in white.
    for (let i = half * page.width; i < data.length; i++)
      data[i] = 130 + Math.round(((255 - page.data[i]) * 125) / 255);
    const flat = flattenBackground({ ...page, data });
    let ink = 0;
    let inkNowDark = 0;
    let fill = 0;
    let fillNowWhite = 0;
    for (let i = (half + 32) * page.width; i < data.length; i++) {
      if (page.data[i] < 64) {
        ink++;
        if (flat.data[i] < 96) inkNowDark++;
      } else if (page.data[i] > 250) {
        fill++;
        if (flat.data[i] > 240) fillNowWhite++;
      }
    }
    assert.ok(ink > 1000, 'the panel holds text');
    assert.ok(inkNowDark / ink > 0.95, `strokes dark again: ${inkNowDark} of ${ink}`);
    assert.ok(fillNowWhite / fill > 0.98, `panel white: ${fillNowWhite} of ${fill}`);
    // The text above the panel is untouched.
    for (let i = 0; i < (half - 64) * page.width; i++) assert.equal(flat.data[i], page.data[i]);
  });

  it("a photograph's smooth tones are neither flattened nor inverted", async () => {
    const page = await samplePage();
    const data = Uint8Array.from(page.data);
    const [x0, y0, side] = [300, 300, 400];
    for (let y = y0; y < y0 + side; y++) {
      for (let x = x0; x < x0 + side; x++) {
        // Tones that change everywhere, slowly: flat cell by cell, never one tone across a window.
        const r = Math.hypot(x - x0 - side / 2, y - y0 - side / 2) / (side / Math.SQRT2);
        data[y * page.width + x] = Math.round(60 + 140 * r);
      }
    }
    const flat = flattenBackground({ ...page, data });
    let same = 0;
    for (let y = y0 + 32; y < y0 + side - 32; y++) {
      for (let x = x0 + 32; x < x0 + side - 32; x++)
        if (Math.abs(flat.data[y * page.width + x] - data[y * page.width + x]) <= 2) same++;
    }
    assert.ok(same / (side - 64) ** 2 > 0.95, `photo kept: ${same} of ${(side - 64) ** 2}`);
  });
});

describe('row ink counts', () => {
  it('count four pixels at a time exactly as one at a time, at any offset, width and buffer alignment', () => {
    let seed = 11;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (const shift of [0, 1, 2, 3]) {
      // Rows of over 1,020 pixels: more than 255 words, so the lanes are folded mid-row.
      const width = 2999;
      const height = 40;
      // A map viewing a larger buffer from an odd byte, as a subarray would; dense enough to fill many words.
      const backing = new Uint8Array(shift + width * height + 5);
      const data = backing.subarray(shift, shift + width * height);
      for (let i = 0; i < data.length; i++) data[i] = rand() < 0.7 ? 1 : 0;
      const ink = { width, height, data };
      for (const r of [
        { x: 0, y: 0, width, height },
        { x: 3, y: 5, width: 2, height: 7 },
        { x: 101, y: 1, width: 2890, height: 38 },
        { x: 2998, y: 0, width: 1, height: 40 },
      ]) {
        const rows = rowProfile(ink, r);
        for (let y = r.y; y < r.y + r.height; y++) {
          let n = 0;
          for (let x = r.x; x < r.x + r.width; x++) n += data[y * width + x];
          assert.equal(rows[y], n, `row ${y} of ${JSON.stringify(r)}, buffer shifted ${shift}`);
        }
      }
    }
  });
});

/** Rules found and erased a pixel at a time: what removeRules did before it stepped four pixels at a time. */
function rulesOneAtATime(ink: InkMap, minLength: number, maxThickness = 6): Rule[] {
  const { width: w, height: h, data } = ink;
  const rules: Rule[] = [];
  const hMask = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    let start = -1;
    for (let x = 0; x <= w; x++) {
      const on = x < w && data[y * w + x] === 1;
      if (on && start < 0) start = x;
      if (!on && start >= 0) {
        if (x - start >= minLength) for (let k = start; k < x; k++) hMask[y * w + k] = 1;
        start = -1;
      }
    }
  }
  const vMask = new Uint8Array(w * h);
  for (let x = 0; x < w; x++) {
    let start = -1;
    for (let y = 0; y <= h; y++) {
      const on = y < h && data[y * w + x] === 1;
      if (on && start < 0) start = y;
      if (!on && start >= 0) {
        if (y - start >= minLength) for (let k = start; k < y; k++) vMask[k * w + x] = 1;
        start = -1;
      }
    }
  }
  const group = (mask: Uint8Array, horizontal: boolean): void => {
    const outer = horizontal ? h : w;
    const inner = horizontal ? w : h;
    const at = (o: number, i: number): number => (horizontal ? o * w + i : i * w + o);
    let o = 0;
    while (o < outer) {
      let lo = inner;
      let hi = -1;
      for (let i = 0; i < inner; i++) if (mask[at(o, i)]) [lo, hi] = [Math.min(lo, i), Math.max(hi, i)];
      if (hi < 0) {
        o++;
        continue;
      }
      let end = o + 1;
      while (end < outer) {
        let next = false;
        for (let i = lo; i <= hi && !next; i++) if (mask[at(end, i)]) next = true;
        if (!next) break;
        end++;
      }
      if (end - o <= maxThickness) {
        for (let oo = o; oo < end; oo++) for (let i = 0; i < inner; i++) if (mask[at(oo, i)]) data[at(oo, i)] = 0;
        rules.push(
          horizontal
            ? { orientation: 'horizontal', box: { x: lo, y: o, width: hi - lo + 1, height: end - o } }
            : { orientation: 'vertical', box: { x: o, y: lo, width: end - o, height: hi - lo + 1 } },
        );
      }
      o = end;
    }
  };
  group(hMask, true);
  group(vMask, false);
  return rules;
}

describe('rules and column ink counts, four pixels at a time', () => {
  let seed = 7;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  /** Sparse specks (text-like), solid patches (figures), and long rules of 1-9 pixels, some touching the edges. */
  function inkMap(width: number, height: number, shift: number): InkMap {
    const backing = new Uint8Array(shift + width * height + 5);
    const data = backing.subarray(shift, shift + width * height);
    for (let i = 0; i < data.length; i++) data[i] = rand() < 0.08 ? 1 : 0;
    const fill = (x0: number, y0: number, w: number, h: number): void => {
      for (let y = y0; y < Math.min(height, y0 + h); y++)
        data.fill(1, y * width + x0, y * width + Math.min(width, x0 + w));
    };
    for (let k = 0; k < 6; k++)
      fill(
        Math.floor(rand() * width * 0.3),
        Math.floor(rand() * height),
        Math.floor(width * (0.3 + rand() * 0.7)),
        1 + Math.floor(rand() * 8),
      );
    for (let k = 0; k < 6; k++)
      fill(
        Math.floor(rand() * width),
        Math.floor(rand() * height * 0.3),
        1 + Math.floor(rand() * 8),
        Math.floor(height * (0.3 + rand() * 0.7)),
      );
    fill(Math.floor(width / 3), Math.floor(height / 3), 30, 25);
    fill(0, 0, width, 1);
    fill(width - 2, 0, 2, height);
    // Solid from top to bottom, mid-row: a lane that would carry if it were emptied any later than every 255 rows.
    fill(Math.floor(width / 2), 0, 9, height);
    return { width, height, data };
  }

  it('take out the same rules and leave the same ink as a pixel at a time, at any width and buffer alignment', () => {
    for (const width of [203, 204, 205, 206]) {
      for (const shift of [0, 1, 2, 3]) {
        const a = inkMap(width, 170, shift);
        const b = { ...a, data: a.data.slice() };
        assert.deepEqual(removeRules(a, 40), rulesOneAtATime(b, 40), `width ${width}, buffer shifted ${shift}`);
        assert.deepEqual(a.data, b.data, `width ${width}, buffer shifted ${shift}: the ink left`);
      }
    }
  });

  it('find the first and last ink of any span exactly as a pixel at a time, at any buffer alignment', () => {
    for (const shift of [0, 1, 2, 3]) {
      const backing = new Uint8Array(shift + 64);
      const data = backing.subarray(shift, shift + 60);
      const words = wordsOf(data);
      for (const inked of [[], [0], [59], [13], [13, 14, 47], [3, 4, 5, 6, 7, 8], [31]]) {
        data.fill(0);
        for (const i of inked) data[i] = 1;
        for (let from = 0; from <= 60; from += 1) {
          for (const to of [from, from + 1, from + 3, from + 4, from + 9, 60]) {
            if (to > 60) continue;
            const within = inked.filter((i) => i >= from && i < to);
            assert.equal(
              firstInk(data, words, from, to),
              within.length ? Math.min(...within) : -1,
              `first of [${from}, ${to}) with ink at ${inked}, shift ${shift}`,
            );
            assert.equal(
              lastInk(data, words, from, to),
              within.length ? Math.max(...within) : -1,
              `last of [${from}, ${to}) with ink at ${inked}, shift ${shift}`,
            );
          }
        }
      }
    }
  });

  it(
    "count a region's column ink exactly as a pixel at a time, across the " +
      'lane fold (over 255 rows), at any alignment',
    () => {
      for (const width of [600, 601, 602, 603]) {
        for (const shift of [0, 1, 2, 3]) {
          const ink = inkMap(width, 600, shift);
          for (const r of [
            { x: 0, y: 0, width, height: 600 },
            { x: 5, y: 3, width: width - 11, height: 590 },
            { x: 2, y: 7, width: 7, height: 9 },
            { x: 1, y: 0, width: 13, height: 511 },
          ]) {
            const want = new Int32Array(r.width);
            for (let y = r.y; y < r.y + r.height; y++)
              for (let x = 0; x < r.width; x++) want[x] += ink.data[y * width + r.x + x];
            assert.deepEqual(
              columnInk(ink, r),
              want,
              `${JSON.stringify(r)} of width ${width}, buffer shifted ${shift}`,
            );
          }
        }
      }
    },
  );
});

describe("a page's ink", () => {
  it(
    'is the same two pixels a table lookup as one at a time, at any length ' +
      'and buffer alignment; the shared map is handed to the layout once, ' +
      'never shared after',
    () => {
      let seed = 5;
      const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (const shift of [0, 1, 2, 3]) {
        for (const [width, height] of [
          [101, 37],
          [100, 40],
          [7, 1],
        ]) {
          const backing = new Uint8Array(shift + width * height + 3);
          const data = backing.subarray(shift, shift + width * height);
          for (let i = 0; i < data.length; i++) data[i] = Math.floor(rand() * 256);
          const page = { width, height, data };
          const thr = inkThreshold(page);
          const want = Uint8Array.from(data, (g) => (g <= thr ? 1 : 0));
          const own = binarize(page);
          assert.deepEqual(own.data, want, `${width}x${height}, buffer shifted ${shift}`);
          const shared = inkOf(page);
          assert.deepEqual(shared.data, want);
          assert.equal(inkOf(page).data, shared.data, 'one shared map per image');
          const taken = binarize(page);
          assert.equal(taken.data, shared.data, 'the shared map is handed over, not copied');
          taken.data.fill(0);
          assert.notEqual(inkOf(page).data, taken.data, 'and forgotten: changing it leaves what inkOf gives next');
          assert.deepEqual(inkOf(page).data, want);
        }
      }
    },
  );
});
