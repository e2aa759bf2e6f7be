/** The page-level sets of the evaluation folder: page images and PDF pages with full text or olmOCR facts. */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Fact } from './olmocr-facts.js';

export interface EvalPage {
  set: string;
  file: string;
  /** 0-based page within the file (PDFs, multi-page TIFFs). */
  page: number;
  truth?: string;
  facts?: Fact[];
  /** olmOCR marks its handwritten pages; a printed-text model is scored without them. */
  handwritten?: boolean;
  /**
   * Whether the set's ground truth holds page headers, footers and page numbers. DocBank (every token of the PDF)
   * and the tesseract test pages (full transcriptions) do; docling's page text leaves out its "furniture" layer,
   * and olmOCR-Bench tests that they are absent. We drop them exactly where the truth does.
   */
  keepsHeadersFooters: boolean;
}

export const PAGE_SETS = ['docbank_pages', 'tesseract_pages', 'docling_pages', 'olmocr_facts'] as const;
export type PageSetName = (typeof PAGE_SETS)[number];

const rowsOf = (path: string): Record<string, unknown>[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * A folder of page images with their text (`manifest.jsonl` rows `{ "image": "a.jpg", "gt": "a.txt" }`, paths within
 * the folder), scored as one more set named by the folder: a public set kept outside the evaluation folder.
 */
export function loadPageDir(dir: string): EvalPage[] {
  const manifest = join(dir, 'manifest.jsonl');
  if (!existsSync(manifest))
    throw new Error(`no manifest at ${manifest}: a page folder lists its images and their text in manifest.jsonl`);
  const set = basename(dir);
  return rowsOf(manifest).map((r) => ({
    set,
    file: join(dir, String(r.image)),
    page: 0,
    truth: readFileSync(join(dir, String(r.gt)), 'utf8'),
    keepsHeadersFooters: true,
  }));
}

export function loadPageSet(evalDir: string, set: string): EvalPage[] {
  const folder = {
    docbank_pages: 'docbank_samples',
    tesseract_pages: 'tesseract_test',
    docling_pages: 'docling_pdfs',
    olmocr_facts: 'olmocr_bench_sample',
  }[set as PageSetName];
  if (!folder) throw new Error(`unknown page set "${set}"; the sets are: ${PAGE_SETS.join(', ')}`);
  const dir = join(evalDir, folder);
  const manifest = join(dir, 'manifest.jsonl');
  if (!existsSync(manifest)) throw new Error(`no manifest at ${manifest}: is --eval-dir the evaluation folder?`);
  const rows = rowsOf(manifest);
  if (set === 'docbank_pages' || set === 'tesseract_pages') {
    return rows
      .filter((r) => r.kind === 'page')
      .map((r) => ({
        set,
        file: join(dir, String(r.image)),
        page: 0,
        truth: readFileSync(join(dir, String(r.gt)), 'utf8'),
        keepsHeadersFooters: true,
      }));
  }
  if (set === 'docling_pages') {
    return rows
      .filter((r) => r.kind === 'pdf_page')
      .map((r) => ({
        set,
        file: join(dir, String(r.pdf)),
        page: Number(r.page) - 1,
        truth: readFileSync(join(dir, String(r.gt)), 'utf8'),
        keepsHeadersFooters: false,
      }));
  }
  const facts = [
    ...rowsOf(join(dir, 'gt', 'dataset.jsonl')),
    ...rowsOf(join(dir, 'gt', 'blanks.jsonl')),
  ] as unknown as Fact[];
  return rows
    .filter((r) => r.kind === 'pdf')
    .flatMap((r) => {
      const name = basename(String(r.pdf));
      const pages = Number(r.n_pages ?? 1);
      return Array.from({ length: pages }, (_, p) => ({
        set,
        file: join(dir, String(r.pdf)),
        page: p,
        facts: facts.filter((f) => f.pdf === name && f.page === p + 1),
        handwritten: String(r.content ?? '')
          .toUpperCase()
          .startsWith('HANDWRITTEN'),
        keepsHeadersFooters: false,
      })).filter((p) => p.facts.length);
    });
}
