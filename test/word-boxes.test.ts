/**
 * Where each word is: the CTC alignment of each line's final text, word boxes on the page whichever way it was
 * scanned, and the formats built on them (hOCR, ALTO, TSV, searchable PDF) checked by real tools: an XML parser,
 * the ALTO 4 schema through xmllint, poppler's pdftotext; through the CLI and the API (real HTTP, tenant checks).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { XMLParser } from 'fast-xml-parser';
import sharp from 'sharp';
import type { PageOut } from '../src/document/assemble.js';
import type { GrayPage } from '../src/document/decode-image.js';
import { straighten } from '../src/document/deskew.js';
import { toAlto } from '../src/document/formats/alto.js';
import { toHocr } from '../src/document/formats/hocr.js';
import { searchablePdf } from '../src/document/formats/searchable-pdf.js';
import { toTsv } from '../src/document/formats/tsv.js';
import type { Box } from '../src/document/layout/ink.js';
import { turnPage, type Turn } from '../src/document/orientation.js';
import { toSourceBox } from '../src/document/page-geometry.js';
import type { WordOut } from '../src/document/word-boxes.js';
import { forceAlign } from '../src/engine/ctc/align.js';
import { Engine } from '../src/engine/engine.js';
import { ned } from '../src/eval/ned.js';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { type DocumentReading, readDocument } from '../src/worker/read-document.js';
import { ApiClient } from './helpers/api-client.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';

const run = promisify(execFile);
const sample = readFileSync(SAMPLE_PAGE);
const wordsOf = (r: DocumentReading): WordOut[] =>
  r.pages.flatMap((p) => p.blocks.flatMap((b) => b.lines.flatMap((l) => l.words ?? [])));
const inside = (inner: Box, outer: Box, slack = 0): boolean =>
  inner.x >= outer.x - slack &&
  inner.y >= outer.y - slack &&
  inner.x + inner.width <= outer.x + outer.width + slack &&
  inner.y + inner.height <= outer.y + outer.height + slack;

describe("forced alignment of a line's text to its CTC frames", () => {
  const vocab = 6;
  const blank = 0;
  /** Frames whose best label is `best[t]` (the others far below). */
  const logits = (best: number[]): Float32Array => {
    const x = new Float32Array(best.length * vocab).fill(-10);
    best.forEach((c, t) => (x[t * vocab + c] = 0));
    return x;
  };

  it('puts each character on the frames that spell it, a repeated one after a blank', () => {
    // frames: _ a a _ b _ b b _   -> "abb"
    const spans = forceAlign(logits([0, 3, 3, 0, 4, 0, 4, 4, 0]), 0, 9, vocab, [3, 4, 4], blank);
    assert.deepEqual(spans, [
      { first: 1, last: 2 },
      { first: 4, last: 4 },
      { first: 6, last: 7 },
    ]);
  });

  it('aligns text the frames do not favour, and refuses text too long for them', () => {
    // The frames say "a", the verifier committed "b": the path still spells "b", somewhere.
    const spans = forceAlign(logits([0, 3, 0]), 0, 3, vocab, [4], blank);
    assert.equal(spans?.length, 1);
    // Two equal labels need a blank between them: three frames cannot spell "bbb".
    assert.equal(forceAlign(logits([4, 4, 4]), 0, 3, vocab, [4, 4, 4], blank), null);
  });
});

describe('page geometry: boxes back in the page as it came in', () => {
  // A white page with one black rectangle.
  const page = (): GrayPage => {
    const width = 400;
    const height = 300;
    const data = new Uint8Array(width * height).fill(255);
    for (let y = 40; y < 70; y++) for (let x = 50; x < 110; x++) data[y * width + x] = 0;
    return { width, height, data };
  };
  const inkBox = (p: GrayPage): Box => {
    let [x0, y0, x1, y1] = [p.width, p.height, -1, -1];
    for (let y = 0; y < p.height; y++) {
      for (let x = 0; x < p.width; x++) {
        if (p.data[y * p.width + x] >= 128) continue;
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x);
        y1 = Math.max(y1, y);
      }
    }
    return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
  };

  for (const turn of [90, 180, 270] as Turn[]) {
    it(`undoes a turn of ${turn} degrees exactly`, async () => {
      const turned = await turnPage(page(), turn);
      assert.deepEqual(toSourceBox({ width: 400, height: 300, turn, degrees: 0 }, inkBox(turned)), {
        x: 50,
        y: 40,
        width: 60,
        height: 30,
      });
    });
  }

  it('undoes a straightened skew to within a pixel or two', async () => {
    const straight = await straighten(page(), 4);
    const back = toSourceBox({ width: 400, height: 300, turn: 0, degrees: 4 }, inkBox(straight));
    // The box of a turned rectangle is larger than it; its centre stays put.
    assert.ok(
      Math.abs(back.x + back.width / 2 - 80) <= 1.5 && Math.abs(back.y + back.height / 2 - 55) <= 1.5,
      JSON.stringify(back),
    );
    assert.ok(inside({ x: 50, y: 40, width: 60, height: 30 }, back, 1), JSON.stringify(back));
  });
});

describe('word boxes and the formats made from them', () => {
  let engine: Engine;
  let upright: DocumentReading;
  let work: string;

  before(async () => {
    engine = await Engine.open();
    upright = await readDocument(engine, sample, 'sample-page.png', { words: true });
    work = mkdtempSync(join(tmpdir(), 'specula-words-'));
  });
  after(async () => {
    await engine?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('every word of the sample page sits inside its line, left to right, and the words spell the line', () => {
    for (const line of upright.pages[0].blocks.flatMap((b) => b.lines)) {
      const words = line.words ?? [];
      assert.equal(words.map((w) => w.text).join(' '), line.text.trim().split(/\s+/).join(' '));
      words.forEach((w, i) => {
        assert.ok(inside(w.box, line.box, 2), `${w.text} ${JSON.stringify(w.box)} outside ${JSON.stringify(line.box)}`);
        assert.ok(w.confidence > 0 && w.confidence <= 1);
        if (i)
          assert.ok(
            w.box.x >= words[i - 1].box.x + words[i - 1].box.width - 2,
            `${words[i - 1].text} / ${w.text} overlap`,
          );
      });
    }
    assert.ok(wordsOf(upright).length > 150);
  });

  it('a page scanned on its side gets the same words, boxed where they are in the turned image', async () => {
    const turned = await sharp(sample).rotate(90).png().toBuffer();
    const read = await readDocument(engine, turned, 'turned.png', { words: true });
    assert.equal(read.pages[0].rotation, 270);
    const { height: H } = upright.pages[0];
    // Upright (x, y, w, h) on a page H tall is (H - y - h, x, h, w) in the image turned a quarter clockwise.
    const expected = wordsOf(upright).map((w) => ({
      text: w.text,
      box: { x: H - w.box.y - w.box.height, y: w.box.x, width: w.box.height, height: w.box.width },
    }));
    const got = wordsOf(read);
    let close = 0;
    for (const e of expected) {
      const g = got.find(
        (x) => x.text === e.text && Math.abs(x.box.x - e.box.x) <= 4 && Math.abs(x.box.y - e.box.y) <= 4,
      );
      if (g && Math.abs(g.box.width - e.box.width) <= 4 && Math.abs(g.box.height - e.box.height) <= 4) close++;
    }
    assert.ok(
      close / expected.length >= 0.9,
      `${close} of ${expected.length} words boxed where the upright read put them`,
    );
  });

  it("hOCR parses as XHTML, with every box inside its parent's and the words in reading order", () => {
    const hocr = toHocr(upright.pages, { fileName: 'sample <page>.png', software: 'specula test' });
    const parser = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '',
      preserveOrder: true,
      textNodeName: '#text',
      parseTagValue: false,
      parseAttributeValue: false,
      trimValues: false,
    });
    const tree = parser.parse(hocr) as unknown[];
    type Node = Record<string, unknown> & { ':@'?: Record<string, string> };
    const bboxOf = (n: Node): Box | null => {
      const m = /bbox (\d+) (\d+) (\d+) (\d+)/.exec(n[':@']?.title ?? '');
      return m ? { x: +m[1], y: +m[2], width: +m[3] - +m[1], height: +m[4] - +m[2] } : null;
    };
    const classes: Record<string, number> = {};
    const words: string[] = [];
    const walk = (nodes: unknown[], parent: Box | null): void => {
      for (const raw of nodes) {
        const n = raw as Node;
        const cls = n[':@']?.class;
        const box = bboxOf(n);
        if (cls) classes[cls] = (classes[cls] ?? 0) + 1;
        if (box && parent)
          assert.ok(inside(box, parent), `${cls} ${JSON.stringify(box)} outside ${JSON.stringify(parent)}`);
        if (cls === 'ocrx_word') {
          assert.match(n[':@']?.title ?? '', /; x_wconf \d{1,3}$/);
          words.push(String((n.span as Node[])[0]?.['#text'] ?? ''));
        }
        const tag = Object.keys(n).find((k) => k !== ':@');
        if (tag && Array.isArray(n[tag])) walk(n[tag] as unknown[], box ?? parent);
      }
    };
    walk(tree, null);
    assert.equal(classes.ocr_page, 1);
    assert.ok(classes.ocr_carea > 3 && classes.ocr_par > 3 && classes.ocr_line > 10, JSON.stringify(classes));
    // The page's own "<Flav>" comes back as text, escaped in the file.
    assert.ok(hocr.includes('&lt;Flav&gt;'), 'markup-like text escaped');
    assert.deepEqual(
      words,
      wordsOf(upright).map((w) => w.text),
    );
  });

  it('ALTO validates against the ALTO 4.4 schema (offline, xmllint)', async () => {
    const file = join(work, 'page.alto.xml');
    writeFileSync(
      file,
      toAlto(upright.pages, { fileName: 'sample-page.png', softwareName: 'specula', softwareVersion: 'test' }),
    );
    const { stderr } = await run('xmllint', [
      '--noout',
      '--nonet',
      '--schema',
      join(ROOT, 'test', 'fixtures', 'alto', 'alto-4-4.xsd'),
      file,
    ]);
    assert.match(stderr, /validates/);
  });

  it("TSV has tesseract's columns and one level-5 row per word", () => {
    const rows = toTsv(upright.pages)
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(rows[0], [
      'level',
      'page_num',
      'block_num',
      'par_num',
      'line_num',
      'word_num',
      'left',
      'top',
      'width',
      'height',
      'conf',
      'text',
    ]);
    assert.ok(rows.every((r) => r.length === 12));
    const words = rows.filter((r) => r[0] === '5');
    assert.deepEqual(
      words.map((r) => r[11]),
      wordsOf(upright).map((w) => w.text),
    );
    assert.ok(words.every((r) => Number(r[10]) >= 0 && Number(r[10]) <= 100));
  });

  it('the searchable PDF gives our text back through pdftotext, each word within a few pixels of its box', async () => {
    const file = join(work, 'page.pdf');
    writeFileSync(file, await searchablePdf({ bytes: sample, format: 'png', pages: upright.pages, pdfDpi: 200 }));
    const text = (await run('pdftotext', ['-raw', file, '-'])).stdout;
    const fold = (s: string): string => s.replace(/\s+/g, ' ').trim();
    assert.ok(ned(fold(text), fold(upright.text)) <= 0.01, `NED ${ned(fold(text), fold(upright.text))}`);
    const bbox = (await run('pdftotext', ['-bbox', file, '-'])).stdout;
    const pageWidth = Number(/<page width="([\d.]+)"/.exec(bbox)?.[1]);
    const scale = upright.pages[0].width / pageWidth;
    const found = [...bbox.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">/g)].map(
      (m) => [1, 2, 3, 4].map((k) => Number(m[k]) * scale),
    );
    const ours = wordsOf(upright);
    assert.equal(found.length, ours.length);
    const off = ours.map((w, i) =>
      Math.max(
        Math.abs(found[i][0] - w.box.x),
        Math.abs(found[i][2] - (w.box.x + w.box.width)),
        Math.abs(found[i][1] - w.box.y),
        Math.abs(found[i][3] - (w.box.y + w.box.height)),
      ),
    );
    off.sort((a, b) => a - b);
    assert.ok(off[Math.floor(off.length / 2)] <= 4, `median corner distance ${off[Math.floor(off.length / 2)]} px`);
    assert.ok(
      off[Math.floor(off.length * 0.95)] <= 8,
      `95th percentile corner distance ${off[Math.floor(off.length * 0.95)]} px`,
    );
  });

  it('a scanned PDF keeps its pages and gains a text layer; a page that had text is left as it was', async () => {
    const scanned = pdfOfImages([sample, sample]);
    const read = await readDocument(engine, scanned, 'scan.pdf', { words: true, pages: '0' });
    const out = join(work, 'scan-ocr.pdf');
    writeFileSync(out, await searchablePdf({ bytes: scanned, format: 'pdf', pages: read.pages, pdfDpi: 200 }));
    const page1 = (await run('pdftotext', ['-f', '1', '-l', '1', '-raw', out, '-'])).stdout;
    const page2 = (await run('pdftotext', ['-f', '2', '-l', '2', '-raw', out, '-'])).stdout;
    assert.ok(ned(page1.replace(/\s+/g, ' ').trim(), read.text.replace(/\s+/g, ' ').trim()) <= 0.01);
    assert.equal(page2.trim(), '', 'the page not read is kept, without text');
    const { stdout: info } = await run('pdfinfo', [out]);
    assert.match(info, /Pages:\s+2/);
    // Written again over itself: page 1 has text now, so nothing is added twice.
    const again = await searchablePdf({ bytes: readFileSync(out), format: 'pdf', pages: read.pages, pdfDpi: 200 });
    const twice = join(work, 'twice.pdf');
    writeFileSync(twice, again);
    assert.equal((await run('pdftotext', ['-f', '1', '-l', '1', '-raw', twice, '-'])).stdout, page1);
  });

  it(
    'character boxes spell each word, left to right inside it, and reach ' +
      'hOCR (ocrx_cinfo) and ALTO (Glyph, schema-valid)',
    async () => {
      const read = await readDocument(engine, sample, 'sample-page.png', { chars: true });
      const words = wordsOf(read);
      assert.deepEqual(
        words.map((w) => w.text),
        wordsOf(upright).map((w) => w.text),
      );
      for (const w of words) {
        const chars = w.chars ?? [];
        assert.equal(chars.map((c) => c.text).join(''), w.text);
        chars.forEach((c, i) => {
          assert.ok(inside(c.box, w.box, 1), `${c.text} of ${w.text} outside it`);
          if (i) assert.ok(c.box.x >= chars[i - 1].box.x, `${w.text}: characters out of order`);
        });
      }
      const hocr = toHocr(read.pages, { fileName: 'x.png', software: 'specula test' });
      assert.equal(
        (hocr.match(/class="ocrx_cinfo" title="x_bboxes \d+ \d+ \d+ \d+; x_conf [\d.]+"/g) ?? []).length,
        words.reduce((n, w) => n + w.text.length, 0),
      );
      const file = join(work, 'chars.alto.xml');
      writeFileSync(file, toAlto(read.pages, { fileName: 'x.png', softwareName: 'specula', softwareVersion: 'test' }));
      const { stderr } = await run('xmllint', [
        '--noout',
        '--nonet',
        '--schema',
        join(ROOT, 'test', 'fixtures', 'alto', 'alto-4-4.xsd'),
        file,
      ]);
      assert.match(stderr, /validates/);
    },
  );

  it("a region bundle's reads are aligned line by line: every line's words spell it", async () => {
    const regions = await Engine.open(join(ROOT, 'models', 'specula-region-base'));
    try {
      const read = await readDocument(regions, sample, 'sample-page.png', { words: true });
      const lines = read.pages[0].blocks.flatMap((b) => b.lines);
      assert.ok(lines.length > 10);
      for (const l of lines) {
        assert.equal(
          (l.words ?? []).map((w) => w.text).join(' '),
          l.text.trim().split(/\s+/).filter(Boolean).join(' '),
        );
        for (const w of l.words ?? []) assert.ok(inside(w.box, l.box, 2), `${w.text} outside its line`);
      }
    } finally {
      await regions.close();
    }
  });

  it('a format that needs word boxes refuses a reading made without them, instead of inventing boxes', async () => {
    const plain: PageOut[] = (await readDocument(engine, sample, 'sample-page.png')).pages;
    assert.throws(() => toHocr(plain, { fileName: 'x', software: 'y' }), /needs word boxes/);
  });
});

describe('word-level formats from the CLI and the API', () => {
  const cli = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  let server: RunningServer;
  let acme: ApiClient;
  let globex: ApiClient;
  let base: string;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'specula-formats-'));
    server = await startServer(
      configFromEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SPECULA_API_KEYS: 'acme:key-acme-1,globex:key-globex-1',
        LOG_LEVEL: 'silent',
      }),
    );
    base = `http://127.0.0.1:${server.port}`;
    acme = new ApiClient(base, 'key-acme-1');
    globex = new ApiClient(base, 'key-globex-1');
  });
  after(async () => {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it(
    'specula parse --format hocr prints hOCR; --format pdf writes the PDF ' + 'given --out and refuses without it',
    async () => {
      const hocr = (await run('node', [cli, 'parse', SAMPLE_PAGE, '--format', 'hocr'], { maxBuffer: 16 << 20 })).stdout;
      assert.match(hocr, /class="ocrx_word"/);
      const refused = await run('node', [cli, 'parse', SAMPLE_PAGE, '--format', 'pdf']).then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(refused?.code, 1);
      assert.match(refused?.stderr ?? '', /--out/);
      const pdf = join(work, 'sample.pdf');
      await run('node', [cli, 'parse', SAMPLE_PAGE, '--format', 'pdf', '--out', pdf]);
      assert.match((await run('pdftotext', [pdf, '-'])).stdout, /Penguin logo/);
    },
  );

  it(
    'a job asking for words and word-level formats gets Line.words, hOCR, ' +
      'ALTO, TSV and a PDF only its tenant can download',
    async () => {
      const create = `mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }`;
      const r = await acme.upload<{ createParseJob: { id: string } }>(
        create,
        { input: { file: null, formats: ['MARKDOWN', 'HOCR', 'ALTO', 'TSV', 'SEARCHABLE_PDF'] } },
        ['input', 'file'],
        sample,
        'sample-page.png',
      );
      assert.equal(r.errors, undefined, JSON.stringify(r.errors));
      const id = (r.data as { createParseJob: { id: string } }).createParseJob.id;
      await acme.sse(`subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }`, { id });
      type Job = {
        status: string;
        hocr: string;
        alto: string;
        tsv: string;
        searchablePdf: { url: string; bytes: number; error: string | null };
        pages: { blocks: { lines: { text: string; words: { text: string; confidence: number; box: Box }[] }[] }[] }[];
      };
      const q = await acme.query<{ parseJob: Job }>(
        `query($id: ID!) { parseJob(id: $id) { status hocr alto tsv ` +
          `searchablePdf { url bytes error } pages { blocks { lines { text words ` +
          `{ text confidence box { x y width height } } } } } } }`,
        { id },
      );
      assert.equal(q.errors, undefined, JSON.stringify(q.errors));
      const job = (q.data as { parseJob: Job }).parseJob;
      assert.equal(job.status, 'SUCCEEDED');
      const lines = job.pages[0].blocks.flatMap((b) => b.lines);
      assert.ok(lines.every((l) => l.words.map((w) => w.text).join(' ') === l.text.trim().split(/\s+/).join(' ')));
      assert.match(job.hocr, /ocr_page/);
      assert.match(job.alto, /<alto /);
      assert.match(job.tsv, /^level\tpage_num/);
      assert.equal(job.searchablePdf.error, null);
      const url = `${base}${job.searchablePdf.url}`;
      const mine = await fetch(url, { headers: { authorization: 'Bearer key-acme-1' } });
      assert.equal(mine.status, 200);
      assert.equal(mine.headers.get('content-type'), 'application/pdf');
      const bytes = new Uint8Array(await mine.arrayBuffer());
      assert.equal(bytes.length, job.searchablePdf.bytes);
      const file = join(work, 'job.pdf');
      writeFileSync(file, bytes);
      assert.match((await run('pdftotext', [file, '-'])).stdout, /Penguin logo/);
      // Another tenant sees no such PDF, and no key gets a 401; neither learns the job exists.
      assert.equal((await fetch(url, { headers: { authorization: 'Bearer key-globex-1' } })).status, 404);
      assert.equal((await fetch(url)).status, 401);
      // A job that asked for no word-level format has no words and no PDF.
      const plain = await globex.upload<{ createParseJob: { id: string } }>(
        create,
        { input: { file: null } },
        ['input', 'file'],
        sample,
        'sample-page.png',
      );
      const pid = (plain.data as { createParseJob: { id: string } }).createParseJob.id;
      await globex.sse(`subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }`, { id: pid });
      const pq = await globex.query<{
        parseJob: {
          hocr: string | null;
          searchablePdf: unknown;
          pages: { blocks: { lines: { words: unknown }[] }[] }[];
        };
      }>(
        `query($id: ID!) { parseJob(id: $id) { hocr searchablePdf { url } ` +
          `pages { blocks { lines { words { text } } } } } }`,
        { id: pid },
      );
      const pj = (
        pq.data as {
          parseJob: {
            hocr: string | null;
            searchablePdf: unknown;
            pages: { blocks: { lines: { words: unknown }[] }[] }[];
          };
        }
      ).parseJob;
      assert.equal(pj.hocr, null);
      assert.equal(pj.searchablePdf, null);
      assert.ok(pj.pages[0].blocks.flatMap((b) => b.lines).every((l) => l.words === null));
      assert.equal(
        (await fetch(`${base}/jobs/${pid}/searchable.pdf`, { headers: { authorization: 'Bearer key-globex-1' } }))
          .status,
        404,
      );
    },
  );
});
