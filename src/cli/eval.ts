/**
 * `specula eval`: CER of our model and of tesseract on the evaluation line sets, in the same run, with
 * seconds per line for both; pages (NED, olmOCR facts); held-out formula crops (normalised-LaTeX exact match and
 * token error rate of the formula reader, tesseract beside it). Writes JSON (and, with --write-config, the bundle's
 * config.json accuracy).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Precision } from '../engine/bundle/bundle.js';
import { Engine } from '../engine/engine.js';
import type { DecodingOptions, DecodingOptionsInput } from '../engine/strategies/options.js';
import { verifierSpec } from '../engine/strategies/registry.js';
import { FormulaReader } from '../worker/formula-reader.js';
import { LINE_SETS, loadLineFolder, loadLineSet } from '../eval/line-sets.js';
import type { PageSetScore } from '../eval/page-runner.js';
import { loadPageDir, loadPageSet, PAGE_SETS } from '../eval/page-sets.js';
import { tesseractVersion } from '../eval/tesseract.js';
import { decodingFlags, decodingFromFlags } from './decoding-flags.js';
import { type FormulaSetResult, printTables, type SetResult, writeAccuracy } from './eval-report.js';
import { runFormulaSet, runLineSet, runPageSet } from './eval-runs.js';
import { loadTableDir, runTableSet, type TableSetScore } from '../eval/table-runner.js';

/** The command line as parseArgs reads it, with the decoding flags. */
function parseEvalFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? '../shared/eval' },
      suite: { type: 'string', default: 'all' },
      sets: { type: 'string' },
      // A folder of line images with a labels.tsv (training/pdf_lines.py's pools), scored as one more line set.
      'line-dir': { type: 'string' },
      // A folder of page images with manifest.jsonl ({ image, gt } rows), scored as one more page set.
      'page-dir': { type: 'string' },
      // Held-out formula crops (training/formula.py --seed 909 ...), for --suite formulas.
      'formula-dir': { type: 'string', default: 'training/runs/formula-heldout' },
      'formula-model': { type: 'string' }, // absent: the shipped formula bundle; "none": pages read formulas as text
      'no-formulas': { type: 'boolean', default: false },
      // Folders of table images with HTML truth (manifest.jsonl rows { image, html }), scored by TEDS: --suite tables.
      'table-dir': { type: 'string' }, // comma-separated
      'formula-baseline': { type: 'string' }, // another formula bundle read over the same crops, for comparison
      limit: { type: 'string' },
      batch: { type: 'string' }, // absent: the engine's default (lines per decoder forward)
      model: { type: 'string' },
      precision: { type: 'string' }, // absent: the engine's default (int8 on CPU where the bundle has it)
      out: { type: 'string', default: 'eval-results/eval.json' },
      'no-tesseract': { type: 'boolean', default: false },
      'write-config': { type: 'boolean', default: false },
      // Decoding for our side: lossless pairings change only the speed; lossy ones (relaxed, visual-keep) the text.
      ...decodingFlags(), // absent: the engine's defaults, but the greedy verifier (the model's own accuracy)
      // Pages turned clockwise by this many degrees before reading (ours and tesseract's): orientation finding.
      turn: { type: 'string', default: '0' },
      // Pages photographed (eval/photograph.ts says how) before reading, ours and tesseract's.
      photograph: { type: 'boolean', default: false },
    },
  });
}

type EvalFlags = ReturnType<typeof parseEvalFlags>['values'];

/** Which sets to score: from --suite, --sets, --line-dir, --page-dir and --formula-dir, checked before reading. */
function chooseSets(values: EvalFlags): {
  lineSets: string[];
  pageSets: string[];
  pageDir: string | null;
  formulaDir: string;
  formulaSuite: boolean;
  tableDirs: string[];
} {
  if (!['lines', 'pages', 'formulas', 'tables', 'all'].includes(values.suite))
    throw new Error(`--suite must be lines, pages, formulas, tables or all, got "${values.suite}"`);
  const tableDirs = ['tables', 'all'].includes(values.suite)
    ? (values['table-dir']?.split(',') ?? []).map((d) => resolve(d.trim()))
    : [];
  if (values.suite === 'tables' && !tableDirs.length)
    throw new Error('--suite tables needs --table-dir DIR: a folder of table images and their HTML (manifest.jsonl)');
  const only = values.suite === 'tables';
  const formulaDir = resolve(values['formula-dir']);
  const formulaSuite =
    values.suite === 'formulas' || (values.suite === 'all' && existsSync(join(formulaDir, 'labels.tsv')));
  if (values.suite === 'formulas' && !existsSync(join(formulaDir, 'labels.tsv'))) {
    throw new Error(
      `no held-out formula crops in ${formulaDir}: make them with ` +
        `training/formula.py (its header says how), or pass --formula-dir`,
    );
  }
  const wanted = values.sets
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // --line-dir alone scores that folder only; with --sets, those sets beside it.
  const lineSets =
    values.suite === 'pages' || values.suite === 'formulas' || only
      ? []
      : (wanted ?? (values['line-dir'] ? [] : Object.keys(LINE_SETS))).filter((s) => s in LINE_SETS);
  // --page-dir alone scores that folder only; with --sets, those sets beside it.
  const pageSets =
    values.suite === 'lines' || values.suite === 'formulas' || only
      ? []
      : (wanted ?? (values['page-dir'] ? [] : [...PAGE_SETS])).filter((s) =>
          (PAGE_SETS as readonly string[]).includes(s),
        );
  const pageDir =
    values['page-dir'] && values.suite !== 'lines' && values.suite !== 'formulas' ? resolve(values['page-dir']) : null;
  return { lineSets, pageSets, pageDir, formulaDir, formulaSuite, tableDirs };
}

/** The formula reader asked for: --formula-model's, else the shipped one; none with --no-formulas or "none". */
function openFormulas(values: EvalFlags): FormulaReader | null {
  const formulaModel = values['no-formulas'] ? 'none' : values['formula-model'];
  // The formula bundle reads at the precision asked of the line bundle, where it has that graph (as `specula parse`).
  const formulaOpts = values.precision ? { precision: values.precision as Precision } : {};
  return formulaModel === 'none'
    ? null
    : formulaModel
      ? new FormulaReader(resolve(formulaModel), formulaOpts)
      : FormulaReader.shipped(formulaOpts);
}

/** Whether the decoding reads as greedy AR decoding does, and its name in the report. */
function describeDecoding(resolved: DecodingOptions): { lossless: boolean; decodingName: string } {
  const lossless = Boolean(verifierSpec(resolved.verifier)?.lossless) && resolved.visualTokens.keep >= 1;
  const keep = resolved.visualTokens.keep < 1 ? `, visual keep ${resolved.visualTokens.keep}` : '';
  const losslessness = lossless ? ' (lossless: the text of greedy AR decoding)' : ' (lossy)';
  return { lossless, decodingName: `${resolved.drafter} + ${resolved.verifier}${keep}${losslessness}` };
}

/** --write-config records the float model's own (greedy) accuracy: any other decoding or graph is refused. */
async function checkWriteConfig(engine: Engine, lossless: boolean): Promise<void> {
  if (!lossless) {
    await engine.close();
    throw new Error(
      "--write-config records the model's own (greedy) accuracy: use a " +
        'lossless decoding (no relaxed or joint verifier, no --visual-keep)',
    );
  }
  if (engine.bundle.precision !== 'fp32') {
    await engine.close();
    // config.json's accuracy is the float model's; the int8 graph's is under int8.evalLines (training/quantize.py).
    throw new Error("--write-config records the float model's accuracy: add --precision fp32");
  }
}

export async function evalCommand(argv: string[]): Promise<number> {
  const { values } = parseEvalFlags(argv);
  const decoding: DecodingOptionsInput = { verifier: 'greedy', ...(await decodingFromFlags(values)) };
  const evalDir = resolve(values['eval-dir']);
  if (!existsSync(evalDir))
    throw new Error(`evaluation folder not found: ${evalDir} (set --eval-dir or SPECULA_EVAL_DIR)`);
  const limit = values.limit ? Number(values.limit) : Infinity;
  const turn = Number(values.turn);
  if (![0, 90, 180, 270].includes(turn)) throw new Error(`--turn must be 0, 90, 180 or 270, got "${values.turn}"`);
  const tessVersion = values['no-tesseract'] ? null : await tesseractVersion();
  if (!values['no-tesseract'] && !tessVersion) {
    throw new Error('tesseract is not installed (apt-get install tesseract-ocr), or pass --no-tesseract');
  }
  const { lineSets, pageSets, pageDir, formulaDir, formulaSuite, tableDirs } = chooseSets(values);
  const batch = values.batch === undefined ? undefined : Number(values.batch);
  if (batch !== undefined && !(Number.isInteger(batch) && batch >= 1))
    throw new Error(`--batch must be a whole number >= 1, got "${values.batch}"`);
  const engine = await Engine.open(values.model, {
    ...(batch ? { maxBatch: batch } : {}),
    ...(values.precision ? { precision: values.precision as Precision } : {}),
  });
  const formulas = openFormulas(values);
  if (formulaSuite && !formulas) {
    await engine.close();
    throw new Error(
      '--suite formulas needs a formula bundle: this install has none at ' +
        'models/specula-formula-base (or pass --formula-model DIR)',
    );
  }
  const precision = values.precision ? { precision: values.precision as Precision } : {};
  const baseline = values['formula-baseline']
    ? new FormulaReader(resolve(values['formula-baseline']), precision)
    : null;
  const resolved = engine.resolve(decoding); // a bad choice fails here, before any page is read
  const { lossless, decodingName } = describeDecoding(resolved);
  if (values['write-config']) await checkWriteConfig(engine, lossless);
  const results: SetResult[] = [];
  const pageResults: PageSetScore[] = [];
  let formulaResult: FormulaSetResult | null = null;
  const tableResults: TableSetScore[] = [];
  try {
    const withTesseract = tessVersion !== null;
    for (const set of pageDir ? [...pageSets, pageDir] : pageSets) {
      const pages = (set === pageDir ? loadPageDir(set) : loadPageSet(evalDir, set)).slice(0, limit);
      const { photograph } = values;
      pageResults.push(await runPageSet(engine, set, pages, { withTesseract, decoding, turn, photograph, formulas }));
    }
    const folders = values['line-dir'] ? values['line-dir'].split(',').map((d) => resolve(d)) : [];
    for (const set of [...lineSets, ...folders]) {
      const lines = (folders.includes(set) ? loadLineFolder(set) : loadLineSet(evalDir, set)).slice(0, limit);
      const name = folders.includes(set) ? basename(set) : set;
      results.push(await runLineSet(engine, name, lines, decoding, tessVersion));
    }
    if (formulaSuite && formulas) {
      const lines = loadLineFolder(formulaDir).slice(0, limit);
      const readers = { formulas, baseline };
      formulaResult = await runFormulaSet(engine, readers, formulaDir, lines, decoding, tessVersion);
    }
    for (const dir of tableDirs) {
      const cases = loadTableDir(dir).slice(0, limit);
      tableResults.push(await runTableSet(engine, dir, cases, tessVersion !== null, decoding));
    }
  } finally {
    await engine.close();
    await formulas?.close();
    await baseline?.close();
  }
  const report = {
    created: new Date().toISOString(),
    model: engine.bundle.config.name,
    precision: engine.bundle.precision,
    modelSteps: engine.bundle.config.training?.steps ?? null,
    tesseract: tessVersion,
    turn,
    photograph: values.photograph,
    machine: `${process.platform} ${process.arch}, node ${process.version}`,
    scoring:
      'lines: corpus CER after NFKC and whitespace folding; pages: mean NED ' +
      'of markdown with its syntax stripped (page headers, footers and ' +
      "numbers kept where a set's truth has them: docbank, tesseract pages; " +
      'dropped where it does not: docling, olmOCR); olmOCR facts: ' +
      'olmOCR-Bench rules, handwritten pages excluded; ours = ' +
      decodingName +
      ', batch ' +
      values.batch,
    decoding: resolved,
    sets: results,
    pageSets: pageResults,
    ...(formulaResult ? { formulas: formulaResult } : {}),
    ...(tableResults.length ? { tables: tableResults } : {}),
  };
  mkdirSync(dirname(resolve(values.out)), { recursive: true });
  writeFileSync(values.out, JSON.stringify(report, null, 2));
  printTables(results, pageResults, formulaResult, tableResults);
  console.log(`\nwritten to ${values.out}`);
  if (values['write-config'] && results.length) writeAccuracy(engine.bundle.dir, report.created, tessVersion, results);
  return 0;
}
