/**
 * Table images with HTML truth (PubTabNet, ICDAR-2013: a folder's manifest.jsonl rows `{ "image", "html" }`), read
 * whole by our pipeline and scored by TEDS and TEDS-S; tesseract beside, its words put in the cells of the same
 * layout (each word in the cell whose ink holds its centre), so that the two readers' text is compared in one
 * structure.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import type { BlockOut } from '../document/page-tree.js';
import { tableHtml } from '../document/table-text.js';
import type { Box } from '../document/layout/ink.js';
import type { Engine } from '../engine/engine.js';
import type { DecodingOptionsInput } from '../engine/strategies/options.js';
import { readDocument } from '../worker/read-document.js';
import { teds } from './teds.js';
import { TESSERACT_ENV } from './tesseract.js';
import { type ScoredWord, tesseractTsvWords } from './word-boxes.js';

const run = promisify(execFile);

export interface TableCase {
  image: string;
  html: string;
}

export interface TableSetScore {
  set: string;
  tables: number;
  /** Images where our layout found a table at all. */
  found: number;
  ours: { teds: number; tedsStructure: number; secondsPerTable: number };
  /** Tesseract's words in our layout's cells. */
  tesseract?: { teds: number };
  /** Each image's scores, so that the loss can be found. */
  images: TableImageScore[];
}

export interface TableImageScore {
  image: string;
  found: boolean;
  teds: number;
  tedsStructure: number;
  tesseract?: number;
}

/** A folder's table images and their HTML truth. */
export function loadTableDir(dir: string): TableCase[] {
  const manifest = join(dir, 'manifest.jsonl');
  if (!existsSync(manifest))
    throw new Error(`no manifest at ${manifest}: a table folder lists its images and their HTML in manifest.jsonl`);
  return readFileSync(manifest, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { image: string; html: string })
    .map((r) => ({ image: join(dir, r.image), html: r.html }));
}

/** The page's largest table block (by grid positions); null where the layout found none. */
function largestTable(blocks: readonly BlockOut[]): BlockOut | null {
  const size = (b: BlockOut): number => (b.table ? b.table.rows * b.table.columns : 0);
  return blocks.filter((b) => b.type === 'table' && b.table).sort((a, b) => size(b) - size(a))[0] ?? null;
}

/** Words whose centre lies in the box, in reading order. */
function wordsIn(words: readonly ScoredWord[], box: Box | null): string {
  if (!box) return '';
  const inside = words.filter((w) => {
    const cx = w.box.x + w.box.width / 2;
    const cy = w.box.y + w.box.height / 2;
    return cx >= box.x && cx <= box.x + box.width && cy >= box.y && cy <= box.y + box.height;
  });
  return inside
    .sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x)
    .map((w) => w.text)
    .join(' ');
}

/** Tesseract's words (TSV, page segmentation as a page) of one image. */
async function tesseractWords(image: string): Promise<ScoredWord[]> {
  const { stdout } = await run('tesseract', [image, 'stdout', '--psm', '3', 'tsv'], {
    env: { ...process.env, ...TESSERACT_ENV },
    maxBuffer: 64 << 20,
  });
  return tesseractTsvWords(stdout);
}

/** Our table and tesseract's words in its cells, as HTML ('' where no table was found), and our seconds. */
async function readTable(
  engine: Engine,
  c: TableCase,
  withTesseract: boolean,
  decoding: DecodingOptionsInput | undefined,
): Promise<{ ours: string; tesseract: string; seconds: number }> {
  const t0 = performance.now();
  const doc = await readDocument(engine, readFileSync(c.image), c.image, { decoding, formulas: null });
  const seconds = (performance.now() - t0) / 1000;
  const table = largestTable(doc.pages[0]?.blocks ?? []);
  if (!table?.table || !table.cells) return { ours: '', tesseract: '', seconds };
  const { spans, headerRows, cellBoxes } = table.table;
  const ours = tableHtml({ cells: table.cells, spans, headerRows });
  if (!withTesseract || !cellBoxes) return { ours, tesseract: '', seconds };
  const words = await tesseractWords(c.image);
  const cells = cellBoxes.map((row) => row.map((box) => wordsIn(words, box)));
  return { ours, tesseract: tableHtml({ cells, spans, headerRows }), seconds };
}

/** A folder of table images read and scored: mean TEDS and TEDS-S over every image (0 where none was found). */
export async function runTableSet(
  engine: Engine,
  dir: string,
  cases: readonly TableCase[],
  withTesseract: boolean,
  decoding?: DecodingOptionsInput,
  onTable?: () => void,
): Promise<TableSetScore> {
  let seconds = 0;
  const images: TableImageScore[] = [];
  for (const c of cases) {
    const r = await readTable(engine, c, withTesseract, decoding);
    seconds += r.seconds;
    images.push({
      image: basename(c.image),
      found: !!r.ours,
      teds: teds(r.ours, c.html),
      tedsStructure: teds(r.ours, c.html, true),
      ...(withTesseract ? { tesseract: teds(r.tesseract, c.html) } : {}),
    });
    onTable?.();
  }
  const mean = (f: (i: TableImageScore) => number): number =>
    images.reduce((a, i) => a + f(i), 0) / Math.max(1, images.length);
  return {
    set: basename(dir),
    tables: cases.length,
    found: images.filter((i) => i.found).length,
    ours: {
      teds: mean((i) => i.teds),
      tedsStructure: mean((i) => i.tedsStructure),
      secondsPerTable: seconds / Math.max(1, images.length),
    },
    ...(withTesseract ? { tesseract: { teds: mean((i) => i.tesseract ?? 0) } } : {}),
    images,
  };
}
