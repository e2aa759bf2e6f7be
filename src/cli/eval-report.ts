/**
 * `specula eval`'s results: the records its JSON holds, the markdown tables it prints, and the line sets' accuracy
 * it writes into a bundle's config.json (--write-config).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FormulaScore } from '../eval/formula-score.js';
import type { TableSetScore } from '../eval/table-runner.js';
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

/** One formula bundle's score over a crop set, and its speed. */
export type FormulaRun = FormulaScore & { model: string; seconds: number; cropsPerSecond: number };

export interface FormulaSetResult {
  set: string;
  model: string;
  /** The formula bundle's vision graph, as the engine opened it. */
  precision: string;
  ours: FormulaRun;
  /** --formula-baseline's bundle over the same crops in the same run. */
  baseline?: FormulaRun;
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
    `\n| formula crops (${r.set}) | crops | normalised-LaTeX exact | typeset exact | token error rate ` +
      `| renders (KaTeX) | crops/s |`,
  );
  console.log(`|---|---|---|---|---|---|---|`);
  const row = (name: string, x: FormulaScore & { seconds: number }) =>
    console.log(
      `| ${name} | ${x.crops} | ${pct(x.exact)} | ${pct(x.typesetExact)} | ${pct(x.tokenErrorRate)} | ` +
        `${pct(x.renders)} | ${(x.crops / x.seconds).toFixed(1)} |`,
    );
  row(`ours (${r.ours.model})`, r.ours);
  if (r.baseline) row(`baseline (${r.baseline.model})`, r.baseline);
  if (r.tesseract) row('tesseract', r.tesseract);
}

/** The results as markdown tables on stdout: line sets, page sets, formula crops (each where it was scored). */
export function printTables(
  results: readonly SetResult[],
  pageResults: readonly PageSetScore[],
  formulaResult: FormulaSetResult | null,
  tableResults: readonly TableSetScore[] = [],
): void {
  printLineTable(results);
  printPageTable(pageResults);
  if (formulaResult) printFormulaTable(formulaResult);
  printTableSets(tableResults);
}

/** The table sets' TEDS: ours, its structure alone, and tesseract's words in our cells. */
function printTableSets(tableResults: readonly TableSetScore[]): void {
  if (!tableResults.length) return;
  console.log(
    '\n| table set | tables | found | ours TEDS | ours TEDS-S | tesseract in our cells TEDS | ours s/table |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of tableResults)
    console.log(
      `| ${r.set} | ${r.tables} | ${r.found} | ${pct(r.ours.teds)} | ${pct(r.ours.tedsStructure)} | ` +
        `${r.tesseract ? pct(r.tesseract.teds) : '-'} | ${r.ours.secondsPerTable.toFixed(2)} |`,
    );
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
