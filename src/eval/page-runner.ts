/** Our pipeline and tesseract on the same pages, with seconds per page for both, scored per set. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import sharp from 'sharp';
import { openSource } from '../document/source.js';
import type { Engine } from '../engine/engine.js';
import type { DecodingOptionsInput } from '../engine/strategies/options.js';
import type { FormulaReader } from '../worker/formula-reader.js';
import { readDocument } from '../worker/read-document.js';
import { ned } from './ned.js';
import { photograph } from './photograph.js';
import { checkFact } from './olmocr-facts.js';
import type { EvalPage } from './page-sets.js';
import { tesseractRead } from './tesseract.js';

export interface PageRun {
  file: string;
  page: number;
  ours: string;
  oursSeconds: number;
  tesseract?: string;
  tesseractSeconds?: number;
  error?: string;
}

/**
 * How a page reaches both readers: as it is, turned clockwise by `turn` degrees (what a scanner batch hands over),
 * or photographed (eval/photograph.ts).
 */
export interface Capture {
  turn?: number;
  photograph?: boolean;
}

/** The page rendered and captured as asked, as image bytes and a name for them; null when taken as it is. */
async function capturedPage(
  bytes: Uint8Array,
  p: { file: string; page: number },
  capture: Capture,
): Promise<{ bytes: Uint8Array; file: string } | null> {
  if (!capture.turn && !capture.photograph) return null;
  const src = await openSource(bytes, p.file, String(p.page));
  try {
    const page = await src.render(p.page);
    if (capture.photograph)
      return {
        bytes: await photograph(page, `${relative(process.cwd(), p.file)}#${p.page}`),
        file: `${p.file} photographed.jpg`,
      };
    const turned = await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
      .rotate(capture.turn)
      .png()
      .toBuffer();
    return { bytes: turned, file: `${p.file} turned ${capture.turn}.png` };
  } finally {
    src.close();
  }
}

export async function runPage(
  engine: Engine,
  p: EvalPage,
  withTesseract: boolean,
  decoding?: DecodingOptionsInput,
  capture: Capture = {},
  formulas: FormulaReader | null = null,
): Promise<PageRun> {
  const original = readFileSync(p.file);
  const captured = await capturedPage(original, p, capture);
  const bytes = captured?.bytes ?? original;
  const at = captured ? { file: captured.file, page: 0 } : p;
  const t0 = performance.now();
  let ours = '';
  let error: string | undefined;
  try {
    ours = (
      await readDocument(engine, bytes, at.file, {
        pages: String(at.page),
        dropHeadersFooters: !p.keepsHeadersFooters,
        decoding,
        formulas,
      })
    ).markdown;
  } catch (e) {
    error = (e as Error).message;
  }
  const oursSeconds = (performance.now() - t0) / 1000;
  if (!withTesseract) return { file: p.file, page: p.page, ours, oursSeconds, error };
  const dir = mkdtempSync(join(tmpdir(), 'specula-eval-'));
  try {
    const image = captured
      ? join(dir, captured.file.endsWith('.jpg') ? 'captured.jpg' : 'captured.png')
      : await pageImageFile(bytes, p, join(dir, 'page.png'));
    if (captured) writeFileSync(image, bytes);
    const t1 = performance.now();
    const tesseract = await tesseractRead(image, 3);
    return {
      file: p.file,
      page: p.page,
      ours,
      oursSeconds,
      tesseract,
      tesseractSeconds: (performance.now() - t1) / 1000,
      error,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The page as an image file tesseract reads the very pixels we read from: an image as it is, a PDF page (or one
 * page of a multi-page TIFF) rendered by our renderer into `out`.
 */
export async function pageImageFile(
  bytes: Uint8Array,
  p: { file: string; page: number },
  out: string,
): Promise<string> {
  const src = await openSource(bytes, p.file, String(p.page));
  try {
    if (src.format !== 'pdf' && src.pageCount === 1) return p.file;
    const page = await src.render(p.page);
    writeFileSync(
      out,
      await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
        .png()
        .toBuffer(),
    );
    return out;
  } finally {
    src.close();
  }
}

export interface PageSetScore {
  set: string;
  pages: number;
  ours: { ned?: number; passRate?: number; secondsPerPage: number; failures: number };
  tesseract?: { ned?: number; passRate?: number; secondsPerPage: number };
  /** olmOCR facts by type: passed / total, ours and tesseract's. */
  factsByType?: Record<string, { total: number; ours: number; tesseract?: number }>;
  /** Every page's own score, so a mean can be traced to the pages behind it. */
  perPage: PageScore[];
}

export interface PageScore {
  file: string;
  page: number;
  ours: { ned?: number; passed?: number; seconds: number; error?: string };
  tesseract?: { ned?: number; passed?: number; seconds: number };
  /** olmOCR facts on this page (scored ones: handwritten pages have none counted). */
  facts?: number;
}

export function scorePages(set: string, pages: EvalPage[], runs: PageRun[]): PageSetScore {
  const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const withTess = runs.every((r) => r.tesseract !== undefined);
  const perPage: PageScore[] = runs.map((r) => ({
    file: relative(process.cwd(), r.file),
    page: r.page,
    ours: { seconds: r.oursSeconds, ...(r.error ? { error: r.error } : {}) },
    ...(withTess ? { tesseract: { seconds: r.tesseractSeconds ?? 0 } } : {}),
  }));
  const score: PageSetScore = {
    set,
    pages: pages.length,
    ours: { secondsPerPage: mean(runs.map((r) => r.oursSeconds)), failures: runs.filter((r) => r.error).length },
    perPage,
  };
  if (withTess) score.tesseract = { secondsPerPage: mean(runs.map((r) => r.tesseractSeconds ?? 0)) };
  if (pages.every((p) => p.truth !== undefined)) {
    pages.forEach((p, i) => {
      perPage[i].ours.ned = ned(runs[i].ours, p.truth ?? '');
      const t = perPage[i].tesseract;
      if (t) t.ned = ned(runs[i].tesseract ?? '', p.truth ?? '');
    });
    score.ours.ned = mean(perPage.map((s) => s.ours.ned ?? 0));
    if (score.tesseract) score.tesseract.ned = mean(perPage.map((s) => s.tesseract?.ned ?? 0));
  } else {
    const byType: Record<string, { total: number; ours: number; tesseract?: number }> = {};
    let total = 0;
    let ours = 0;
    let tess = 0;
    pages.forEach((p, i) => {
      if (p.handwritten) return; // printed-text model: handwritten pages are reported apart, not scored
      const row = perPage[i];
      row.facts = p.facts?.length ?? 0;
      row.ours.passed = 0;
      if (row.tesseract) row.tesseract.passed = 0;
      for (const f of p.facts ?? []) {
        const t = (byType[f.type] ??= { total: 0, ours: 0, ...(withTess ? { tesseract: 0 } : {}) });
        t.total++;
        total++;
        if (checkFact(f, runs[i].ours)) {
          t.ours++;
          ours++;
          row.ours.passed++;
        }
        if (row.tesseract && checkFact(f, runs[i].tesseract ?? '')) {
          t.tesseract = (t.tesseract ?? 0) + 1;
          tess++;
          row.tesseract.passed = (row.tesseract.passed ?? 0) + 1;
        }
      }
    });
    score.factsByType = byType;
    score.ours.passRate = total ? ours / total : 0;
    if (score.tesseract) score.tesseract.passRate = total ? tess / total : 0;
  }
  return score;
}
