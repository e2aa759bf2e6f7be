/**
 * Focal pruning: accuracy retained and decoder-step latency against the share of visual tokens kept (5%, 10%,
 * 20%, 50%, 100%), on the longest real lines (where pruning has something to save), beside tesseract on the same
 * lines. Accuracy retained = 1 - CER of the pruned text against the unpruned text of the same lines; CER against
 * the ground truth is reported too. Writes JSON, prints a table, and draws the plot as a PNG.
 *
 * With --regions K it reads multi-line regions instead, with a region bundle: runs of K consecutive DocBank lines
 * of a page, each read as one sequence (the decoder attending to all K lines' visual tokens), beside the line
 * bundle reading the same lines one at a time and tesseract on them.
 *
 * --decoding says how the rows decode: ar (plain greedy AR, the default here), default (the engine's defaults: ctc
 * drafter, joint verifier, auto draft length) or ctc-greedy; each row reports CER against the truth, lines read
 * exactly, tokens per forward and decode time besides.
 *
 * npm run bench:focal -- [--set docbank_samples|ocropy_uw3_500] [--lines 64] [--pool 400] [--rounds 3] [--batch 1]
 * [--no-tesseract] [--decoding ar|default|ctc-greedy] [--keeps 1,0.2]
 *   npm run bench:focal -- --regions 4 [--lines 38] [--model models/specula-region-base]
 */
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { Engine, type ReadMetrics } from '../src/engine/engine.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import type { GrayCrop } from '../src/engine/vision/preprocess.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { loadRegionCrops } from '../src/eval/region-crops.js';
import { tesseractVersion } from '../src/eval/tesseract.js';
import { benchLines, median, reportHeader, tesseractLinesPerSecond, writeReport } from './lines.js';
import { benchOptions } from './bench-args.js';

const { values } = benchOptions(import.meta.url, {
  options: {
    lines: { type: 'string', default: '64' },
    pool: { type: 'string', default: '400' },
    set: { type: 'string', default: 'docbank_samples' },
    'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? '../shared/eval' },
    batch: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    'no-tesseract': { type: 'boolean', default: false },
    regions: { type: 'string' },
    model: { type: 'string' },
    out: { type: 'string' },
    plot: { type: 'string' },
    decoding: { type: 'string', default: 'ar' },
    keeps: { type: 'string', default: '1,0.5,0.2,0.1,0.05' },
  },
});
const KEEPS = values.keeps.split(',').map(Number);
if (KEEPS[0] !== 1 || KEEPS.some((k) => !(k > 0 && k <= 1)))
  throw new Error(`--keeps must start with 1 (the unpruned run) and hold shares in (0, 1], not "${values.keeps}"`);
const DECODINGS: Record<string, DecodingOptionsInput> = {
  ar: { drafter: 'none', verifier: 'greedy' },
  default: {},
  'ctc-greedy': { drafter: 'ctc', verifier: 'greedy' },
};
const decodingBase = DECODINGS[values.decoding];
if (!decodingBase)
  throw new Error(`--decoding must be one of ${Object.keys(DECODINGS).join(', ')}, not "${values.decoding}"`);
const perRegion = values.regions ? Number(values.regions) : 0;
if (values.regions && !(Number.isInteger(perRegion) && perRegion >= 1))
  throw new Error(`--regions must be a whole number of lines, not "${values.regions}"`);
const stem = perRegion ? 'bench/results/focal-regions' : 'bench/results/focal';
const outFile = values.out ?? `${stem}.json`;
const plotFile = values.plot ?? `${stem}.png`;

const engine = await Engine.open(values.model ?? (perRegion ? 'models/specula-region-base' : undefined));
engine.maxBatch = Number(values.batch);
/** What is read: lines (one crop each) or regions (several), their truth, and their image files per item. */
let items: GrayCrop[][];
let truth: string[];
let files: string[][];
let described: string;
if (perRegion) {
  const regions = await loadRegionCrops(values['eval-dir'], perRegion, engine.imageSpec, Number(values.lines));
  if (!regions.length) throw new Error(`no regions of ${perRegion} consecutive lines in ${values['eval-dir']}`);
  items = regions.map((r) => r.crops);
  truth = regions.map((r) => r.truth);
  files = regions.map((r) => r.files);
  const tokens =
    items.reduce((n, c) => n + c.reduce((m, x) => m + x.width, 0), 0) /
    items.length /
    engine.bundle.config.image.visualStride;
  described =
    `${items.length} regions of ${perRegion} consecutive docbank lines ` +
    `(${tokens.toFixed(0)} visual tokens per region on average)`;
} else {
  // The longest lines of a larger pool: pruning saves most where a line has many visual tokens.
  const pool = await benchLines(engine, Number(values.pool), values['eval-dir'], values.set);
  const order = pool.crops
    .map((_, i) => i)
    .sort((a, b) => pool.crops[b].width - pool.crops[a].width)
    .slice(0, Number(values.lines));
  items = order.map((i) => [pool.crops[i]]);
  truth = order.map((i) => pool.truth[i]);
  files = order.map((i) => [pool.files[i]]);
  const meanWidth = items.reduce((n, c) => n + c[0].width, 0) / items.length;
  described =
    `${items.length} longest of ${pool.source} (mean width ` +
    `${meanWidth.toFixed(0)} px, ` +
    `${(meanWidth / engine.bundle.config.image.visualStride).toFixed(0)} ` +
    `visual tokens)`;
}
const read = async (
  some: GrayCrop[][],
  decoding: DecodingOptionsInput,
): Promise<{ texts: string[]; metrics: ReadMetrics }> => {
  if (perRegion) {
    const r = await engine.readRegions(some, { decoding });
    return { texts: r.regions.map((x) => x.text), metrics: r.metrics };
  }
  const r = await engine.readLines(
    some.map((c) => c[0]),
    { decoding },
  );
  return { texts: r.lines.map((x) => x.text), metrics: r.metrics };
};

const rows: Record<string, number>[] = [];
let full: string[] = [];
// Warm-up (first-run allocations, JIT), then every keep ratio once per round: a step's time is the median over
// rounds, so a slow moment of the machine lands on one sample of each ratio, not on one ratio.
await read(items.slice(0, 8), decodingBase);
const rounds = Number(values.rounds);
const stepMs = new Map<number, number[]>(KEEPS.map((k) => [k, []]));
const decodeMs = new Map<number, number[]>(KEEPS.map((k) => [k, []]));
for (let round = 0; round < rounds; round++) {
  for (const keep of KEEPS) {
    const { texts, metrics } = await read(items, { ...decodingBase, visualTokens: { keep } });
    stepMs.get(keep)?.push(metrics.decodeMs / Math.max(1, metrics.forwards));
    decodeMs.get(keep)?.push(metrics.decodeMs + metrics.draftMs);
    process.stderr.write(
      `round ${round + 1} keep ${keep}: ${(metrics.decodeMs / metrics.forwards).toFixed(2)} ms/step\n`,
    );
    if (round > 0) continue; // the text is the same every round
    if (keep === 1) full = texts;
    const changed = corpusCer(texts.map((t, i) => tally(t, full[i])));
    rows.push({
      keep,
      visualTokenRatio: metrics.visualTokenRatio,
      accuracyRetained: 1 - changed,
      cerVsUnpruned: changed,
      cer: corpusCer(texts.map((t, i) => tally(t, truth[i]))),
      exactLines: texts.filter((t, i) => tally(t, truth[i]).edits === 0).length / texts.length,
      forwards: metrics.forwards,
      tokensPerForward: metrics.committedTokens / Math.max(1, metrics.sequenceForwards),
      msPerStep: 0,
      decodeMs: 0,
    });
  }
}
for (const r of rows) {
  r.msPerStep = median(stepMs.get(r.keep) ?? [0]);
  r.decodeMs = median(decodeMs.get(r.keep) ?? [0]);
}
const base = rows[0].msPerStep;
for (const r of rows) {
  r.stepSpeedup = base / r.msPerStep;
  r.decodeSpeedup = rows[0].decodeMs / r.decodeMs;
}

const tess = values['no-tesseract'] ? null : await tesseractVersion();
const flatFiles = files.flat();
const tessRow = tess
  ? await tesseractLinesPerSecond(flatFiles).then(({ seconds, texts }) => {
      // Its lines back into their items (one line each, or a region's lines joined as the truth joins them).
      let at = 0;
      const joined = files.map((f) => texts.slice(at, (at += f.length)).join('\n'));
      return {
        system: tess,
        linesPerSecond: flatFiles.length / seconds,
        cer: corpusCer(joined.map((t, i) => tally(t, truth[i]))),
      };
    })
  : null;
// Regions: the line bundle reading the same lines one at a time, for what reading them as one sequence costs.
let lineBundle: { model: string; cer: number } | null = null;
if (perRegion) {
  const lines = await Engine.open();
  const r = await lines.readLines(items.flat(), { decoding: { drafter: 'none', verifier: 'greedy' } });
  let at = 0;
  const joined = items.map((c) =>
    r.lines
      .slice(at, (at += c.length))
      .map((l) => l.text)
      .join('\n'),
  );
  lineBundle = { model: lines.bundle.config.name, cer: corpusCer(joined.map((t, i) => tally(t, truth[i]))) };
  await lines.close();
}

const header = reportHeader(engine);
const report = {
  ...header,
  lines: described,
  batch: Number(values.batch),
  decoding: { name: values.decoding, ...decodingBase },
  rounds,
  notes:
    'accuracyRetained = 1 - CER(pruned text, unpruned text); msPerStep = ' +
    'decoder time per forward (gathering the kept columns included), ' +
    'median over rounds; a full (unpruned) step follows an uncertain token ' +
    'and comes every 16 steps, so visualTokenRatio is above keep.',
  rows,
  tesseract: tessRow,
  ...(lineBundle ? { lineBundleOneLineAtATime: lineBundle } : {}),
};
await engine.close();
writeReport(outFile, report);

// The plot: accuracy retained and step speedup against the share kept.
const W = 640;
const H = 360;
const x = (keep: number): number => 60 + ((Math.log10(keep) - Math.log10(0.05)) / (0 - Math.log10(0.05))) * (W - 100);
const yAcc = (a: number): number => 30 + ((1 - a) / 0.5) * (H - 80); // 1.0 at top, 0.5 at bottom
const maxSpeed = Math.max(2, ...rows.map((r) => r.stepSpeedup));
const ySpeed = (s: number): number => 30 + (1 - s / maxSpeed) * (H - 80);
const poly = (f: (r: Record<string, number>) => number): string =>
  rows.map((r) => `${x(r.keep).toFixed(1)},${f(r).toFixed(1)}`).join(' ');
const svgOpen = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans"`;
const svg = `${svgOpen} font-size="12">
<rect width="100%" height="100%" fill="white"/>
<line x1="60" y1="${H - 50}" x2="${W - 40}" y2="${H - 50}" stroke="#444"/>
<line x1="60" y1="30" x2="60" y2="${H - 50}" stroke="#444"/>
${rows.map((r) => `<text x="${x(r.keep) - 10}" y="${H - 32}">${Math.round(r.keep * 100)}%</text>`).join('')}
<text x="${W / 2 - 80}" y="${H - 10}">visual tokens kept (log scale)</text>
<line x1="60" y1="${yAcc(0.98)}" x2="${W - 40}" y2="${yAcc(0.98)}" stroke="#2a7" stroke-dasharray="4 4"/>
<text x="${W - 150}" y="${yAcc(0.98) - 4}" fill="#2a7">98% target</text>
<polyline points="${poly((r) => yAcc(Math.max(0.5, r.accuracyRetained)))}" fill="none" stroke="#2a7" stroke-width="2"/>
<polyline points="${poly((r) => ySpeed(r.stepSpeedup))}" fill="none" stroke="#c50" stroke-width="2"/>
<text x="70" y="20" fill="#2a7">accuracy retained (100% top, 50% bottom)</text>
<text x="${W - 260}" y="20" fill="#c50">step speedup (0 to ${maxSpeed.toFixed(1)}x)</text>
</svg>`;
writeFileSync(plotFile, await sharp(Buffer.from(svg)).png().toBuffer());

console.log(`\n${report.lines}, batch ${report.batch}, ${String(header.machine)}\n`);
console.log(`decoding: ${values.decoding}\n`);
console.log(
  '| keep | visual tokens attended | accuracy retained | CER | lines ' +
    'exact | tokens/forward | ms per step | step speedup | decode ms | ' +
    'decode speedup |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${(r.keep * 100).toFixed(0)}% | ` +
      `${(r.visualTokenRatio * 100).toFixed(1)}% | ` +
      `${(r.accuracyRetained * 100).toFixed(1)}% | ` +
      `${(r.cer * 100).toFixed(2)}% | ${(r.exactLines * 100).toFixed(1)}% | ` +
      `${r.tokensPerForward.toFixed(2)} | ${r.msPerStep.toFixed(2)} | ` +
      `${r.stepSpeedup.toFixed(2)}x | ${r.decodeMs.toFixed(0)} | ` +
      `${r.decodeSpeedup.toFixed(2)}x |`,
  );
}
if (lineBundle)
  console.log(`| ${lineBundle.model}, one line at a time | | | ${(lineBundle.cer * 100).toFixed(2)}% | | | | | | |`);
if (tessRow)
  console.log(
    `| ${tessRow.system} | | | ${(tessRow.cer * 100).toFixed(2)}% | | | ` +
      `${(1000 / tessRow.linesPerSecond).toFixed(0)} ms/line | | | |`,
  );
console.log(`\nwritten to ${outFile} and ${plotFile}`);
