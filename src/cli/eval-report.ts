/**
 * `specula eval`'s results: the records its JSON holds, the markdown tables it prints, and the line sets' accuracy
 * it writes into a bundle's config.json (--write-config).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FormulaScore } from '../eval/formula-score.js';
import type { PageSetScore } from '../eval/page-runner.js';

export interface SideResult {
  cer: number;
  seconds: number;
  linesPerSecond: number;
  failed: number;
}

export interface SetResult {
  set: string;
  lines: number;
  ours: SideResult;
  oursCtc: { cer: number };
  tesseract?: SideResult;
  worst: { image: string; truth: string; ours: string; tesseract?: string }[];
}

export interface FormulaSetResult {
  set: string;
  model: string;
  /** The formula bundle's vision graph, as the engine opened it. */
  precision: string;
  ours: FormulaScore & { seconds: number; cropsPerSecond: number };
  tesseract?: FormulaScore & { seconds: number };
  worst: { image: string; truth: string; ours: string }[];
}

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;

/** The line sets' table: CER of ours (and of its CTC head) and of tesseract, and lines per second. */
function printLineTable(results: readonly SetResult[]): void {
  if (results.length) {
    console.log(
      `| line set | lines | ours CER | ours CTC-head CER | tesseract CER | ours lines/s | tesseract lines/s |`,
    );
    console.log(`|---|---|---|---|---|---|---|`);
  }
  for (const r of results) {
    console.log(
      `| ${r.set} | ${r.lines} | ${pct(r.ours.cer)} | ${pct(r.oursCtc.cer)} ` +
        `| ${r.tesseract ? pct(r.tesseract.cer) : '-'} | ` +
        `${r.ours.linesPerSecond.toFixed(1)} | ` +
        `${r.tesseract ? r.tesseract.linesPerSecond.toFixed(1) : '-'} |`,
    );
  }
}

/** The page sets' table: NED, olmOCR facts passed (by type beneath each set) and seconds per page. */
function printPageTable(pageResults: readonly PageSetScore[]): void {
  if (!pageResults.length) return;
  const f = (x: number | undefined, pctOf = false): string => (x === undefined ? '-' : pctOf ? pct(x) : x.toFixed(3));
  console.log(
    `\n| page set | pages | ours NED | tesseract NED | ours facts passed | ` +
      `tesseract facts passed | ours s/page | tesseract s/page |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|`);
  for (const r of pageResults) {
    console.log(
      `| ${r.set} | ${r.pages} | ${f(r.ours.ned)} | ${f(r.tesseract?.ned)} | ` +
        `${f(r.ours.passRate, true)} | ${f(r.tesseract?.passRate, true)} | ` +
        `${r.ours.secondsPerPage.toFixed(2)} | ` +
        `${r.tesseract ? r.tesseract.secondsPerPage.toFixed(2) : '-'} |`,
    );
    for (const [type, t] of Object.entries(r.factsByType ?? {})) {
      console.log(`|   ${type} facts | ${t.total} | | | ${t.ours}/${t.total} | ${t.tesseract ?? '-'}/${t.total} | | |`);
    }
  }
}

/** The formula crops' table: exact matches, token error rate, how many render, and crops per second. */
function printFormulaTable(r: FormulaSetResult): void {
  console.log(
    `\n| formula crops (${r.set}) | crops | normalised-LaTeX exact | token error rate | renders (KaTeX) | crops/s |`,
  );
  console.log(`|---|---|---|---|---|---|`);
  console.log(
    `| ours (${r.model}) | ${r.ours.crops} | ${pct(r.ours.exact)} | ` +
      `${pct(r.ours.tokenErrorRate)} | ${pct(r.ours.renders)} | ` +
      `${r.ours.cropsPerSecond.toFixed(1)} |`,
  );
  if (r.tesseract)
    console.log(
      `| tesseract | ${r.tesseract.crops} | ${pct(r.tesseract.exact)} | ` +
        `${pct(r.tesseract.tokenErrorRate)} | ${pct(r.tesseract.renders)} | ` +
        `${(r.tesseract.crops / r.tesseract.seconds).toFixed(1)} |`,
    );
}

/** The results as markdown tables on stdout: line sets, page sets, formula crops (each where it was scored). */
export function printTables(
  results: readonly SetResult[],
  pageResults: readonly PageSetScore[],
  formulaResult: FormulaSetResult | null,
): void {
  printLineTable(results);
  printPageTable(pageResults);
  if (formulaResult) printFormulaTable(formulaResult);
}

/** The line sets' accuracy, written into the bundle's config.json beside the accuracy it records already. */
export function writeAccuracy(
  bundleDir: string,
  measured: string,
  tessVersion: string | null,
  results: readonly SetResult[],
): void {
  const path = join(bundleDir, 'config.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as { accuracy?: Record<string, unknown> };
  config.accuracy = {
    ...config.accuracy,
    evalLines: {
      measured,
      tesseract: tessVersion,
      sets: Object.fromEntries(
        results.map((r) => [
          r.set,
          {
            lines: r.lines,
            cer: Number(r.ours.cer.toFixed(5)),
            ctcCer: Number(r.oursCtc.cer.toFixed(5)),
            tesseractCer: r.tesseract ? Number(r.tesseract.cer.toFixed(5)) : null,
          },
        ]),
      ),
    },
  };
  writeFileSync(path, JSON.stringify(config, null, 1) + '\n');
  console.log(`accuracy written to ${path}`);
}
