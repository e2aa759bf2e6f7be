/** The line sets of the evaluation folder (../shared/eval): images with their ground-truth text. */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

export interface EvalLine {
  set: string;
  image: string; // absolute path
  text: string;
  /** The truth ignores the printed case: score case-insensitively. */
  foldCase: boolean;
  /** tesseract's language pack for the line (its folder's meta.json); English where absent. */
  tesseractLang?: string;
}

/** Set name -> its folder, and whether its truth ignores case (SROIE transcribes every receipt upper-cased). */
export const LINE_SETS: Record<string, { folder: string; foldCase?: boolean }> = {
  docbank_lines: { folder: 'docbank_samples' },
  ocropy_uw3_500: { folder: 'ocropy_uw3_500' },
  tesseract_lstmf_lines: { folder: 'tesseract_lstmf_lines' },
  sroie_receipt_lines: { folder: 'sroie_receipts_public', foldCase: true },
};

interface ManifestRow {
  image?: string;
  kind?: string;
  gt_text?: string;
  gt?: string;
}

export function loadLineSet(evalDir: string, set: string): EvalLine[] {
  const spec = LINE_SETS[set];
  if (!spec) throw new Error(`unknown line set "${set}"; the sets are: ${Object.keys(LINE_SETS).join(', ')}`);
  const dir = join(evalDir, spec.folder);
  const manifest = join(dir, 'manifest.jsonl');
  if (!existsSync(manifest)) throw new Error(`no manifest at ${manifest}: is --eval-dir the evaluation folder?`);
  const rows = readFileSync(manifest, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ManifestRow);
  return rows
    .filter((r) => r.kind === 'line' && r.image)
    .map((r) => ({
      set,
      image: join(dir, r.image as string),
      text: r.gt_text ?? readFileSync(join(dir, r.gt as string), 'utf8').replace(/\n+$/, ''),
      foldCase: spec.foldCase === true,
    }));
}

/**
 * A folder of line images listed in `labels.tsv` (image file, then its text, tab-separated; more columns are
 * ignored): training/pdf_lines.py writes its pools so, and its held-out split (PDFs never trained on) is scored this
 * way. The set is named after the folder. A `meta.json` beside may name tesseract's language pack for its lines
 * (`{"tesseract": "pol"}`, bench/european-lines.py).
 */
export function loadLineFolder(dir: string): EvalLine[] {
  const tsv = join(dir, 'labels.tsv');
  if (!existsSync(tsv)) throw new Error(`no labels.tsv in ${dir}`);
  const set = basename(resolve(dir));
  const metaFile = join(dir, 'meta.json');
  const meta = existsSync(metaFile) ? (JSON.parse(readFileSync(metaFile, 'utf8')) as { tesseract?: unknown }) : {};
  const lang = typeof meta.tesseract === 'string' ? { tesseractLang: meta.tesseract } : {};
  return readFileSync(tsv, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((row) => {
      const [image, text] = row.split('\t');
      if (!image || text === undefined) throw new Error(`${tsv}: a row is not "image<TAB>text": ${row.slice(0, 80)}`);
      return { set, image: join(dir, image), text, foldCase: false, ...lang };
    });
}

/** A multi-line region of the evaluation set: consecutive lines of one page, top to bottom. */
export interface EvalRegion {
  page: string;
  lines: EvalLine[];
}

/**
 * DocBank's line crops are cut from their pages in reading order (`<page>_l000.jpg`, `_l001`, ...): runs of
 * `perRegion` consecutive lines of a page make multi-line regions whose truth is their lines' truths.
 */
export function loadRegionSet(evalDir: string, perRegion: number): EvalRegion[] {
  const byPage = new Map<string, { index: number; line: EvalLine }[]>();
  for (const line of loadLineSet(evalDir, 'docbank_lines')) {
    const m = /^(.*)_l(\d+)\.[a-z]+$/.exec(line.image);
    if (!m) continue;
    const list = byPage.get(m[1]) ?? [];
    list.push({ index: Number(m[2]), line });
    byPage.set(m[1], list);
  }
  const out: EvalRegion[] = [];
  for (const [page, list] of byPage) {
    list.sort((a, b) => a.index - b.index);
    for (let i = 0; i + perRegion <= list.length; i += perRegion) {
      const run = list.slice(i, i + perRegion);
      // Only runs of truly consecutive lines: a gap would be a different stretch of the page.
      if (run.every((r, j) => r.index === run[0].index + j)) out.push({ page, lines: run.map((r) => r.line) });
    }
  }
  return out;
}
