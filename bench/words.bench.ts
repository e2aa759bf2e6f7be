/**
 * Word boxes: ours (the CTC alignment of each line's final text, drawn tight round the ink) against DocBank's own
 * word boxes on its 19 pages, tesseract's TSV words beside them in the same run (one process per core,
 * OMP_THREAD_LIMIT=1); what word boxes and each output format add to a page's time; and the searchable PDF's
 * round trip through poppler's pdftotext (its text against ours, its word boxes against ours).
 *
 *   npm run bench:words -- [--limit N] [--no-tesseract] [--model DIR] [--out bench/results/words.json]
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { renderWordFormat, WORD_FORMATS, type WordFormat } from '../src/document/formats/index.js';
import { DEFAULT_SOURCE_LIMITS } from '../src/document/source.js';
import type { WordOut } from '../src/document/word-boxes.js';
import { Engine } from '../src/engine/engine.js';
import { ned } from '../src/eval/ned.js';
import { TESSERACT_ENV, tesseractVersion } from '../src/eval/tesseract.js';
import {
  docbankWords,
  scoreWordBoxes,
  sumScores,
  tesseractTsvWords,
  type WordBoxScore,
} from '../src/eval/word-boxes.js';
import { SOFTWARE_NAME, softwareVersion } from '../src/version.js';
import { type DocumentReading, readDocument } from '../src/worker/read-document.js';
import { median, writeReport } from './lines.js';
import { benchOptions } from './bench-args.js';

const run = promisify(execFile);
const { values } = benchOptions(import.meta.url, {
  options: {
    'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? '../shared/eval' },
    limit: { type: 'string' },
    'no-tesseract': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/words.json' },
    model: { type: 'string' },
  },
});
const dir = join(values['eval-dir'], 'docbank_samples');
if (!existsSync(join(dir, 'manifest.jsonl')))
  throw new Error(`no DocBank pages at ${dir} (set --eval-dir or SPECULA_EVAL_DIR)`);
const pages = readFileSync(join(dir, 'manifest.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as { kind: string; image: string; gt_tokens: string; width: number; height: number })
  .filter((r) => r.kind === 'page')
  .slice(0, values.limit ? Number(values.limit) : undefined);
const tessVersion = values['no-tesseract'] ? null : await tesseractVersion();
if (!values['no-tesseract'] && !tessVersion)
  throw new Error('tesseract is not installed (apt-get install tesseract-ocr), or pass --no-tesseract');

const engine = await Engine.open(values.model);
const software = { name: SOFTWARE_NAME, version: softwareVersion() };
const words = (r: DocumentReading): WordOut[] =>
  r.pages.flatMap((p) => p.blocks.flatMap((b) => b.lines.flatMap((l) => l.words ?? [])));

// Warm the engine (its sessions, the draft-length calibration, the layout thread) on the first page.
await readDocument(engine, readFileSync(join(dir, pages[0].image)), pages[0].image, { words: true });

const plainSeconds: number[] = [];
const wordSeconds: number[] = [];
const formatMs: Record<WordFormat, number[]> = { hocr: [], alto: [], tsv: [], pdf: [] };
const ours: WordBoxScore[] = [];
const roundTrip: { ned: number; wordsFound: number; words: number; medianCornerPx: number }[] = [];
const work = mkdtempSync(join(tmpdir(), 'specula-words-'));
for (const [i, page] of pages.entries()) {
  const file = join(dir, page.image);
  const bytes = readFileSync(file);
  // Each page read both ways, the order alternating, so the machine's drift falls on both alike.
  let withWords: DocumentReading | null = null;
  for (const on of i % 2 ? [true, false] : [false, true]) {
    const t = performance.now();
    const r = await readDocument(engine, bytes, file, { words: on });
    (on ? wordSeconds : plainSeconds).push((performance.now() - t) / 1000);
    if (on) withWords = r;
  }
  const r = withWords as DocumentReading;
  const pg = r.pages[0];
  ours.push(scoreWordBoxes(docbankWords(join(dir, page.gt_tokens), pg.width, pg.height), words(r)));
  let pdf: Uint8Array | null = null;
  for (const f of WORD_FORMATS) {
    const t = performance.now();
    const out = await renderWordFormat(f, {
      bytes,
      fileName: page.image,
      format: r.format,
      pages: r.pages,
      pdfDpi: DEFAULT_SOURCE_LIMITS.pdfDpi,
      software,
    });
    formatMs[f].push(performance.now() - t);
    if (f === 'pdf') pdf = out as Uint8Array;
  }
  // The searchable PDF through poppler: its text, and where it puts each of our words.
  const pdfFile = join(work, `page-${i}.pdf`);
  writeFileSync(pdfFile, pdf as Uint8Array);
  const text = (await run('pdftotext', ['-raw', pdfFile, '-'])).stdout;
  const bbox = (await run('pdftotext', ['-bbox', pdfFile, '-'], { maxBuffer: 16 << 20 })).stdout;
  const pageWidthPt = Number(/<page width="([\d.]+)"/.exec(bbox)?.[1] ?? 0);
  const scale = pageWidthPt ? pg.width / pageWidthPt : 1;
  const found = [
    ...bbox.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g),
  ].map((m) => ({
    text: m[5]
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'"),
    box: [1, 2, 3, 4].map((k) => Number(m[k]) * scale),
  }));
  // Our words and poppler's, paired in order where the texts agree: how far apart their corners are, in pixels.
  const mine = words(r);
  const corners: number[] = [];
  let k = 0;
  for (const w of mine) {
    const at = found.findIndex((f, j) => j >= k && j < k + 5 && f.text === w.text);
    if (at < 0) continue;
    k = at + 1;
    const b = found[at].box;
    corners.push(
      Math.max(
        Math.abs(b[0] - w.box.x),
        Math.abs(b[1] - w.box.y),
        Math.abs(b[2] - (w.box.x + w.box.width)),
        Math.abs(b[3] - (w.box.y + w.box.height)),
      ),
    );
  }
  roundTrip.push({
    ned: ned(text.replace(/\s+/g, ' ').trim(), r.text.replace(/\s+/g, ' ').trim()),
    wordsFound: corners.length,
    words: mine.length,
    medianCornerPx: median(corners) ?? 0,
  });
  process.stderr.write(`page ${i + 1}/${pages.length}: ${ours[i].matched}/${ours[i].truth} words matched\n`);
}
await engine.close();

let tesseract: (WordBoxScore & { share: number; pagesPerSecond: number }) | null = null;
if (tessVersion) {
  const scores: WordBoxScore[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < pages.length) {
      const i = next++;
      const { stdout } = await run(
        'tesseract',
        [join(dir, pages[i].image), 'stdout', '--psm', '3', '-l', 'eng', 'tsv'],
        { env: { ...process.env, ...TESSERACT_ENV }, maxBuffer: 16 << 20 },
      );
      scores[i] = scoreWordBoxes(
        docbankWords(join(dir, pages[i].gt_tokens), pages[i].width, pages[i].height),
        tesseractTsvWords(stdout),
      );
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(cpus().length, pages.length) }, lane));
  tesseract = { ...sumScores(scores), pagesPerSecond: pages.length / ((performance.now() - t0) / 1000) };
}
rmSync(work, { recursive: true, force: true });

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const specula = sumScores(ours);
const report = {
  created: new Date().toISOString(),
  machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`,
  pages: pages.length,
  tesseract: tessVersion,
  scoring:
    'share of DocBank truth words (tokens.tsv, 0-1000 page coordinates ' +
    'scaled to pixels) matched one to one by a predicted word with the ' +
    'same NFKC text and box IoU >= 0.5 (src/eval/word-boxes.ts)',
  wordBoxes: {
    specula: { ...specula, model: engine.bundle.config.name, decoding: 'the engine defaults' },
    ...(tesseract
      ? {
          tesseract: {
            ...tesseract,
            system: `tesseract (${tessVersion}) --psm 3 tsv, ${cpus().length} processes, OMP_THREAD_LIMIT=1`,
          },
        }
      : {}),
  },
  cost: {
    timing:
      'each page read twice in turn, without and with word boxes (order ' +
      'alternating), model loaded and warm; formats rendered from the ' +
      'reading with words',
    secondsPerPage: { plain: sum(plainSeconds) / pages.length, withWords: sum(wordSeconds) / pages.length },
    wordBoxesAddPercent: (100 * (sum(wordSeconds) - sum(plainSeconds))) / sum(plainSeconds),
    formatMsPerPage: Object.fromEntries(WORD_FORMATS.map((f) => [f, sum(formatMs[f]) / pages.length])),
  },
  searchablePdf: {
    how:
      'pdftotext -raw on our searchable PDF of each page: NED of its text ' +
      'against ours (whitespace folded); pdftotext -bbox: the largest corner ' +
      'distance between its box and ours per word (paired in order where the ' +
      'texts agree), median over words, in page pixels',
    meanNed: sum(roundTrip.map((x) => x.ned)) / roundTrip.length,
    worstNed: Math.max(...roundTrip.map((x) => x.ned)),
    wordsPaired: sum(roundTrip.map((x) => x.wordsFound)),
    words: sum(roundTrip.map((x) => x.words)),
    medianCornerPx: median(roundTrip.map((x) => x.medianCornerPx)),
  },
};
writeReport(values.out, report);

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
console.log(`\n${report.machine}; ${pages.length} DocBank pages\n`);
console.log(
  "| system | truth words | matched (same text, IoU >= 0.5) | same text at all | median IoU (the pages' medians) |",
);
console.log('|---|---:|---:|---:|---:|');
console.log(
  `| Specula | ${specula.truth} | ${pct(specula.share)} | ` +
    `${pct(specula.sameText / specula.truth)} | ` +
    `${specula.medianIou.toFixed(3)} |`,
);
if (tesseract)
  console.log(
    `| tesseract | ${tesseract.truth} | ${pct(tesseract.share)} | ` +
      `${pct(tesseract.sameText / tesseract.truth)} | ` +
      `${tesseract.medianIou.toFixed(3)} |`,
  );
const c = report.cost;
console.log(
  `\nseconds per page: ${c.secondsPerPage.plain.toFixed(3)} without word ` +
    `boxes, ${c.secondsPerPage.withWords.toFixed(3)} with ` +
    `(${c.wordBoxesAddPercent.toFixed(1)}%)`,
);
console.log(`ms per page to render: ${WORD_FORMATS.map((f) => `${f} ${c.formatMsPerPage[f].toFixed(1)}`).join(', ')}`);
const s = report.searchablePdf;
console.log(
  `searchable PDF through pdftotext: NED ${s.meanNed.toFixed(4)} (worst ` +
    `${s.worstNed.toFixed(4)}); ${s.wordsPaired}/${s.words} words paired, ` +
    `median corner distance ${s.medianCornerPx.toFixed(1)} px`,
);
console.log(`\nwritten to ${values.out}`);
