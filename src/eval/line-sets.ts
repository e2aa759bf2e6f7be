/** The line sets of the evaluation folder (../shared/eval): images with their ground-truth text. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface EvalLine {
  set: string;
  image: string; // absolute path
  text: string;
}

/** Set name -> folder and a filter over its manifest rows. */
export const LINE_SETS: Record<string, { folder: string }> = {
  docbank_lines: { folder: 'docbank_samples' },
  ocropy_uw3_500: { folder: 'ocropy_uw3_500' },
  tesseract_lstmf_lines: { folder: 'tesseract_lstmf_lines' },
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
  const rows = readFileSync(manifest, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ManifestRow);
  return rows
    .filter((r) => r.kind === 'line' && r.image)
    .map((r) => ({
      set,
      image: join(dir, r.image as string),
      text: r.gt_text ?? readFileSync(join(dir, r.gt as string), 'utf8').replace(/\n+$/, ''),
    }));
}
