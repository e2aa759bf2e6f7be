/**
 * `specula eval`: CER of our model and of tesseract on the evaluation line sets, in the same run, with
 * seconds per line for both; pages (NED, olmOCR facts); held-out formula crops (normalised-LaTeX exact match and
 * token error rate of the formula reader, tesseract beside it). Writes JSON (and, with --write-config, the bundle's
 * config.json accuracy).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { decodeImage } from '../document/decode-image.js';
import type { Precision } from '../engine/bundle/bundle.js';
import { Engine } from '../engine/engine.js';
import type { DecodingOptionsInput } from '../engine/strategies/options.js';
import { verifierSpec } from '../engine/strategies/registry.js';
import { lineImageCrop } from '../worker/page-turn.js';
import type { GrayCrop } from '../engine/vision/preprocess.js';
import { corpusCer, tally } from '../eval/cer.js';
import { type FormulaScore, scoreFormulas } from '../eval/formula-score.js';
import { normalLatex } from '../eval/latex-score.js';
import { FormulaReader } from '../worker/formula-reader.js';
import { LINE_SETS, loadLineFolder, loadLineSet, type EvalLine } from '../eval/line-sets.js';
import { runPage, scorePages, type PageSetScore } from '../eval/page-runner.js';
import { loadPageDir, loadPageSet, PAGE_SETS } from '../eval/page-sets.js';
import { tesseractRead, tesseractVersion } from '../eval/tesseract.js';
import { decodingFlags, decodingFromFlags } from './decoding-flags.js';

interface SideResult {
  cer: number;
  seconds: number;
  linesPerSecond: number;
  failed: number;
}

interface SetResult {
  set: string;
  lines: number;
  ours: SideResult;
  oursCtc: { cer: number };
  tesseract?: SideResult;
  worst: { image: string; truth: string; ours: string; tesseract?: string }[];
}

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
          texts[i] = await tesseractRead(lines[i].image, 7);
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

interface FormulaSetResult {
  set: string;
  model: string;
  /** The formula bundle's vision graph, as the engine opened it. */
  precision: string;
  ours: FormulaScore & { seconds: number; cropsPerSecond: number };
  tesseract?: FormulaScore & { seconds: number };
  worst: { image: string; truth: string; ours: string }[];
}

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;

export async function evalCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
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
  if (!['lines', 'pages', 'formulas', 'all'].includes(values.suite))
    throw new Error(`--suite must be lines, pages, formulas or all, got "${values.suite}"`);
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
    values.suite === 'pages' || values.suite === 'formulas'
      ? []
      : (wanted ?? (values['line-dir'] ? [] : Object.keys(LINE_SETS))).filter((s) => s in LINE_SETS);
  // --page-dir alone scores that folder only; with --sets, those sets beside it.
  const pageSets =
    values.suite === 'lines' || values.suite === 'formulas'
      ? []
      : (wanted ?? (values['page-dir'] ? [] : [...PAGE_SETS])).filter((s) =>
          (PAGE_SETS as readonly string[]).includes(s),
        );
  const pageDir =
    values['page-dir'] && values.suite !== 'lines' && values.suite !== 'formulas' ? resolve(values['page-dir']) : null;
  const batch = values.batch === undefined ? undefined : Number(values.batch);
  if (batch !== undefined && !(Number.isInteger(batch) && batch >= 1))
    throw new Error(`--batch must be a whole number >= 1, got "${values.batch}"`);
  const engine = await Engine.open(values.model, {
    ...(batch ? { maxBatch: batch } : {}),
    ...(values.precision ? { precision: values.precision as Precision } : {}),
  });
  const formulaModel = values['no-formulas'] ? 'none' : values['formula-model'];
  // The formula bundle reads at the precision asked of the line bundle, where it has that graph (as `specula parse`).
  const formulaOpts = values.precision ? { precision: values.precision as Precision } : {};
  const formulas =
    formulaModel === 'none'
      ? null
      : formulaModel
        ? new FormulaReader(resolve(formulaModel), formulaOpts)
        : FormulaReader.shipped(formulaOpts);
  if (formulaSuite && !formulas) {
    await engine.close();
    throw new Error(
      '--suite formulas needs a formula bundle: this install has none at ' +
        'models/specula-formula-base (or pass --formula-model DIR)',
    );
  }
  const resolved = engine.resolve(decoding); // a bad choice fails here, before any page is read
  const lossless = Boolean(verifierSpec(resolved.verifier)?.lossless) && resolved.visualTokens.keep >= 1;
  if (values['write-config'] && !lossless) {
    await engine.close();
    throw new Error(
      "--write-config records the model's own (greedy) accuracy: use a " +
        'lossless decoding (no relaxed or joint verifier, no --visual-keep)',
    );
  }
  if (values['write-config'] && engine.bundle.precision !== 'fp32') {
    await engine.close();
    // config.json's accuracy is the float model's; the int8 graph's is under int8.evalLines (training/quantize.py).
    throw new Error("--write-config records the float model's accuracy: add --precision fp32");
  }
  const keep = resolved.visualTokens.keep < 1 ? `, visual keep ${resolved.visualTokens.keep}` : '';
  const losslessness = lossless ? ' (lossless: the text of greedy AR decoding)' : ' (lossy)';
  const decodingName = `${resolved.drafter} + ${resolved.verifier}${keep}${losslessness}`;
  const results: SetResult[] = [];
  const pageResults: PageSetScore[] = [];
  let formulaResult: FormulaSetResult | null = null;
  try {
    for (const set of pageDir ? [...pageSets, pageDir] : pageSets) {
      const pages = (set === pageDir ? loadPageDir(set) : loadPageSet(evalDir, set)).slice(0, limit);
      const b = bar(`pages      ${basename(set)}`, pages.length);
      const runs = [];
      for (const p of pages) {
        runs.push(
          await runPage(engine, p, tessVersion !== null, decoding, { turn, photograph: values.photograph }, formulas),
        );
        b?.increment();
      }
      b?.stop();
      pageResults.push(scorePages(pages[0]?.set ?? basename(set), pages, runs));
    }
    const folders = values['line-dir'] ? [resolve(values['line-dir'])] : [];
    for (const set of [...lineSets, ...folders]) {
      const lines = (folders.includes(set) ? loadLineFolder(set) : loadLineSet(evalDir, set)).slice(0, limit);
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
      results.push({
        set: folders.includes(set) ? basename(set) : set,
        lines: lines.length,
        ours: oursSide,
        oursCtc: { cer: corpusCer(ours.ctc.map((t, i) => tally(t, lines[i].text, lines[i].foldCase))) },
        ...(tess ? { tesseract: side(tess.texts, lines, tess.seconds, tess.failed) } : {}),
        worst,
      });
    }
    if (formulaSuite && formulas) {
      const lines = loadLineFolder(formulaDir).slice(0, limit);
      const crops = await Promise.all(lines.map((l) => loadCrop(engine, l.image)));
      const t0 = performance.now();
      const read = await formulas.read(crops, decoding);
      const seconds = (performance.now() - t0) / 1000;
      const truths = lines.map((l) => l.text);
      const tess = tessVersion ? await runTesseract(lines, 2) : null;
      const ours = await scoreFormulas(
        read.map((r) => r.text),
        truths,
      );
      const { bundle } = await formulas.engine();
      formulaResult = {
        set: basename(formulaDir),
        model: bundle.config.name,
        precision: bundle.precision,
        ours: { ...ours, seconds, cropsPerSecond: lines.length / seconds },
        ...(tess ? { tesseract: { ...(await scoreFormulas(tess.texts, truths)), seconds: tess.seconds } } : {}),
        // The first eight crops not read exactly, for a look.
        worst: lines
          .flatMap((l, i) =>
            normalLatex(read[i].text).join(' ') === normalLatex(l.text).join(' ')
              ? []
              : [{ image: l.image, truth: l.text, ours: read[i].text }],
          )
          .slice(0, 8),
      };
    }
  } finally {
    await engine.close();
    await formulas?.close();
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
  };
  mkdirSync(dirname(resolve(values.out)), { recursive: true });
  writeFileSync(values.out, JSON.stringify(report, null, 2));
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
  if (pageResults.length) {
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
        console.log(
          `|   ${type} facts | ${t.total} | | | ${t.ours}/${t.total} | ${t.tesseract ?? '-'}/${t.total} | | |`,
        );
      }
    }
  }
  if (formulaResult) {
    const r = formulaResult;
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
  console.log(`\nwritten to ${values.out}`);
  if (values['write-config'] && results.length) {
    const path = join(engine.bundle.dir, 'config.json');
    const config = JSON.parse(readFileSync(path, 'utf8')) as { accuracy?: Record<string, unknown> };
    config.accuracy = {
      ...config.accuracy,
      evalLines: {
        measured: report.created,
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
  return 0;
}
