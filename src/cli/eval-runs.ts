/**
 * `specula eval`'s runs: our reader and tesseract over a line set, a page set or the held-out formula crops, timed
 * and scored.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import cliProgress from 'cli-progress';
import { decodeImage } from '../document/decode-image.js';
import type { Engine } from '../engine/engine.js';
import type { DecodingOptionsInput } from '../engine/strategies/options.js';
import { lineImageCrop } from '../worker/page-turn.js';
import type { GrayCrop } from '../engine/vision/preprocess.js';
import { corpusCer, tally } from '../eval/cer.js';
import { scoreFormulas } from '../eval/formula-score.js';
import { normalLatex } from '../eval/latex-score.js';
import type { FormulaReader } from '../worker/formula-reader.js';
import type { EvalLine } from '../eval/line-sets.js';
import { type PageSetScore, runPage, scorePages } from '../eval/page-runner.js';
import type { EvalPage } from '../eval/page-sets.js';
import { tesseractRead } from '../eval/tesseract.js';
import type { FormulaRun, FormulaSetResult, SetResult, SideResult } from './eval-report.js';

function bar(label: string, total: number): cliProgress.SingleBar | null {
  if (!process.stderr.isTTY) return null;
  const b = new cliProgress.SingleBar(
    { format: `${label.padEnd(34)} [{bar}] {value}/{total} lines | {eta_formatted} left`, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  b.start(total, 0);
  return b;
}

async function loadCrop(engine: Engine, image: string): Promise<GrayCrop> {
  return lineImageCrop(engine, await decodeImage(await readFile(image), image));
}

async function runOurs(engine: Engine, lines: EvalLine[], decoding: DecodingOptionsInput) {
  const crops: GrayCrop[] = [];
  const failedIdx = new Set<number>();
  for (const [i, l] of lines.entries()) {
    try {
      crops.push(await loadCrop(engine, l.image));
    } catch {
      failedIdx.add(i);
      crops.push({
        width: 8,
        height: engine.imageSpec.height,
        data: new Uint8Array(8 * engine.imageSpec.height).fill(255),
      });
    }
  }
  const b = bar(`ours       ${lines[0]?.set ?? ''}`, lines.length);
  let done = 0;
  const t0 = performance.now();
  const { lines: out } = await engine.readLines(crops, { decoding, onLine: () => b?.update(++done) });
  const seconds = (performance.now() - t0) / 1000;
  b?.stop();
  return {
    texts: out.map((o, i) => (failedIdx.has(i) ? '' : o.text)),
    ctc: out.map((o) => o.ctcText),
    seconds,
    failed: failedIdx.size,
  };
}

async function runTesseract(lines: EvalLine[], concurrency: number) {
  const texts: string[] = new Array(lines.length).fill('');
  let failed = 0;
  let next = 0;
  let done = 0;
  const b = bar(`tesseract  ${lines[0]?.set ?? ''}`, lines.length);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < lines.length) {
        const i = next++;
        try {
          texts[i] = await tesseractRead(lines[i].image, 7, lines[i].tesseractLang);
        } catch {
          failed++;
        }
        b?.update(++done);
      }
    }),
  );
  b?.stop();
  return { texts, seconds: (performance.now() - t0) / 1000, failed };
}

function side(texts: string[], lines: EvalLine[], seconds: number, failed: number): SideResult {
  const cer = corpusCer(texts.map((t, i) => tally(t, lines[i].text, lines[i].foldCase)));
  return { cer, seconds, linesPerSecond: lines.length / seconds, failed };
}

/** A page set read by us (and by tesseract where it is installed), page by page, and scored. */
export async function runPageSet(
  engine: Engine,
  set: string,
  pages: EvalPage[],
  opts: {
    withTesseract: boolean;
    decoding: DecodingOptionsInput;
    turn: number;
    photograph: boolean;
    formulas: FormulaReader | null;
  },
): Promise<PageSetScore> {
  const { turn, photograph } = opts;
  const b = bar(`pages      ${basename(set)}`, pages.length);
  const runs = [];
  for (const p of pages) {
    runs.push(await runPage(engine, p, opts.withTesseract, opts.decoding, { turn, photograph }, opts.formulas));
    b?.increment();
  }
  b?.stop();
  return scorePages(pages[0]?.set ?? basename(set), pages, runs);
}

/** A line set read by us (and by tesseract where it is installed), scored, with the five lines we read worst. */
export async function runLineSet(
  engine: Engine,
  name: string,
  lines: EvalLine[],
  decoding: DecodingOptionsInput,
  tessVersion: string | null,
): Promise<SetResult> {
  const ours = await runOurs(engine, lines, decoding);
  const tess = tessVersion ? await runTesseract(lines, 2) : null;
  const oursSide = side(ours.texts, lines, ours.seconds, ours.failed);
  const worst = lines
    .map((l, i) => ({ i, e: tally(ours.texts[i], l.text, l.foldCase).edits }))
    .sort((a, b) => b.e - a.e)
    .slice(0, 5)
    .map(({ i }) => ({
      image: lines[i].image,
      truth: lines[i].text,
      ours: ours.texts[i],
      ...(tess ? { tesseract: tess.texts[i] } : {}),
    }));
  return {
    set: name,
    lines: lines.length,
    ours: oursSide,
    oursCtc: { cer: corpusCer(ours.ctc.map((t, i) => tally(t, lines[i].text, lines[i].foldCase))) },
    ...(tess ? { tesseract: side(tess.texts, lines, tess.seconds, tess.failed) } : {}),
    worst,
  };
}

/** The held-out formula crops read by the formula reader (and by tesseract where it is installed), and scored. */
export async function runFormulaSet(
  engine: Engine,
  readers: { formulas: FormulaReader; baseline: FormulaReader | null },
  formulaDir: string,
  lines: EvalLine[],
  decoding: DecodingOptionsInput,
  tessVersion: string | null,
): Promise<FormulaSetResult> {
  const crops = await Promise.all(lines.map((l) => loadCrop(engine, l.image)));
  const truths = lines.map((l) => l.text);
  const ours = await readFormulas(readers.formulas, crops, truths, decoding);
  const baseline = readers.baseline ? await readFormulas(readers.baseline, crops, truths, decoding) : null;
  const tess = tessVersion ? await runTesseract(lines, 2) : null;
  const { bundle } = await readers.formulas.engine();
  return {
    set: basename(formulaDir),
    model: bundle.config.name,
    precision: bundle.precision,
    ours: ours.score,
    ...(baseline ? { baseline: baseline.score } : {}),
    ...(tess ? { tesseract: { ...(await scoreFormulas(tess.texts, truths)), seconds: tess.seconds } } : {}),
    // The first eight crops not read exactly, for a look.
    worst: lines
      .flatMap((l, i) =>
        normalLatex(ours.texts[i]).join(' ') === normalLatex(l.text).join(' ')
          ? []
          : [{ image: l.image, truth: l.text, ours: ours.texts[i] }],
      )
      .slice(0, 8),
  };
}

/** One formula bundle's readings of the crops, timed and scored. */
async function readFormulas(
  reader: FormulaReader,
  crops: Awaited<ReturnType<typeof loadCrop>>[],
  truths: string[],
  decoding: DecodingOptionsInput,
): Promise<{ texts: string[]; score: FormulaRun }> {
  const t0 = performance.now();
  const texts = (await reader.read(crops, decoding)).map((r) => r.text);
  const seconds = (performance.now() - t0) / 1000;
  const { bundle } = await reader.engine();
  const score = await scoreFormulas(texts, truths);
  return { texts, score: { model: bundle.config.name, ...score, seconds, cropsPerSecond: crops.length / seconds } };
}
