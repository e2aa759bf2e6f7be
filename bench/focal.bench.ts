/**
 * Focal pruning: accuracy retained and decoder-step latency against the share of visual tokens kept (5%, 10%,
 * 20%, 50%, 100%), on the longest real lines (where pruning has something to save), beside tesseract on the same
 * lines. Accuracy retained = 1 - CER of the pruned text against the unpruned text of the same lines; CER against
 * the ground truth is reported too. Writes JSON, prints a table, and draws the plot as a PNG.
 *
 *   npm run bench:focal -- [--lines 64] [--pool 400] [--rounds 3] [--batch 1] [--no-tesseract]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { Engine } from '../src/engine/engine.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { tesseractVersion } from '../src/eval/tesseract.js';
import { benchLines, median, reportHeader, tesseractLinesPerSecond, writeReport } from './lines.js';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '64' },
    pool: { type: 'string', default: '400' },
    'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? '../shared/eval' },
    batch: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    'no-tesseract': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/focal.json' },
    plot: { type: 'string', default: 'bench/results/focal.png' },
  },
});
const KEEPS = [1, 0.5, 0.2, 0.1, 0.05];

const engine = await Engine.open();
engine.maxBatch = Number(values.batch);
// The longest lines of a larger pool: pruning saves most where a line has many visual tokens.
const pool = await benchLines(engine, Number(values.pool), values['eval-dir']);
const order = pool.crops.map((_, i) => i).sort((a, b) => pool.crops[b].width - pool.crops[a].width).slice(0, Number(values.lines));
const crops = order.map((i) => pool.crops[i]);
const truth = order.map((i) => pool.truth[i]);
const files = order.map((i) => pool.files[i]);
const meanWidth = crops.reduce((n, c) => n + c.width, 0) / crops.length;

const rows: Record<string, number>[] = [];
let full: string[] = [];
// Warm-up (first-run allocations, JIT), then every keep ratio once per round: a step's time is the median over
// rounds, so a slow moment of the machine lands on one sample of each ratio, not on one ratio.
await engine.readLines(crops.slice(0, 8), { decoding: { drafter: 'none', verifier: 'greedy' } });
const rounds = Number(values.rounds);
const stepMs = new Map<number, number[]>(KEEPS.map((k) => [k, []]));
for (let round = 0; round < rounds; round++) {
  for (const keep of KEEPS) {
    const { lines, metrics } = await engine.readLines(crops, { decoding: { drafter: 'none', verifier: 'greedy', visualTokens: { keep } } });
    stepMs.get(keep)?.push(metrics.decodeMs / Math.max(1, metrics.forwards));
    process.stderr.write(`round ${round + 1} keep ${keep}: ${(metrics.decodeMs / metrics.forwards).toFixed(2)} ms/step\n`);
    if (round > 0) continue; // the text is the same every round
    const texts = lines.map((l) => l.text);
    if (keep === 1) full = texts;
    const changed = corpusCer(texts.map((t, i) => tally(t, full[i])));
    rows.push({
      keep,
      visualTokenRatio: metrics.visualTokenRatio,
      accuracyRetained: 1 - changed,
      cerVsUnpruned: changed,
      cer: corpusCer(texts.map((t, i) => tally(t, truth[i]))),
      forwards: metrics.forwards,
      msPerStep: 0,
    });
  }
}
for (const r of rows) r.msPerStep = median(stepMs.get(r.keep) ?? [0]);
const base = rows[0].msPerStep;
for (const r of rows) r.stepSpeedup = base / r.msPerStep;

const tess = values['no-tesseract'] ? null : await tesseractVersion();
const tessRow = tess ? await tesseractLinesPerSecond(files).then(({ seconds, texts }) => ({ system: tess, linesPerSecond: files.length / seconds, cer: corpusCer(texts.map((t, i) => tally(t, truth[i]))) })) : null;

const header = reportHeader(engine);
const report = {
  ...header,
  lines: `${crops.length} longest of ${pool.source} (mean width ${meanWidth.toFixed(0)} px, ${(meanWidth / engine.bundle.config.image.visualStride).toFixed(0)} visual tokens)`,
  batch: Number(values.batch),
  rounds,
  notes: 'accuracyRetained = 1 - CER(pruned text, unpruned text); msPerStep = decoder time per forward (gathering the kept columns included), median over rounds; a full (unpruned) step follows an uncertain token and comes every 16 steps, so visualTokenRatio is above keep.',
  rows,
  tesseract: tessRow,
};
await engine.close();
writeReport(values.out, report);

// The plot: accuracy retained and step speedup against the share kept.
const W = 640;
const H = 360;
const x = (keep: number): number => 60 + (Math.log10(keep) - Math.log10(0.05)) / (0 - Math.log10(0.05)) * (W - 100);
const yAcc = (a: number): number => 30 + (1 - a) / 0.5 * (H - 80); // 1.0 at top, 0.5 at bottom
const maxSpeed = Math.max(2, ...rows.map((r) => r.stepSpeedup));
const ySpeed = (s: number): number => 30 + (1 - s / maxSpeed) * (H - 80);
const poly = (f: (r: Record<string, number>) => number): string => rows.map((r) => `${x(r.keep).toFixed(1)},${f(r).toFixed(1)}`).join(' ');
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<line x1="60" y1="${H - 50}" x2="${W - 40}" y2="${H - 50}" stroke="#444"/><line x1="60" y1="30" x2="60" y2="${H - 50}" stroke="#444"/>
${rows.map((r) => `<text x="${x(r.keep) - 10}" y="${H - 32}">${Math.round(r.keep * 100)}%</text>`).join('')}
<text x="${W / 2 - 80}" y="${H - 10}">visual tokens kept (log scale)</text>
<line x1="60" y1="${yAcc(0.98)}" x2="${W - 40}" y2="${yAcc(0.98)}" stroke="#2a7" stroke-dasharray="4 4"/>
<text x="${W - 150}" y="${yAcc(0.98) - 4}" fill="#2a7">98% target</text>
<polyline points="${poly((r) => yAcc(Math.max(0.5, r.accuracyRetained)))}" fill="none" stroke="#2a7" stroke-width="2"/>
<polyline points="${poly((r) => ySpeed(r.stepSpeedup))}" fill="none" stroke="#c50" stroke-width="2"/>
<text x="70" y="20" fill="#2a7">accuracy retained (100% top, 50% bottom)</text>
<text x="${W - 260}" y="20" fill="#c50">step speedup (0 to ${maxSpeed.toFixed(1)}x)</text>
</svg>`;
writeFileSync(values.plot, await sharp(Buffer.from(svg)).png().toBuffer());

console.log(`\n${report.lines}, batch ${report.batch}, ${String(header.machine)}\n`);
console.log('| keep | visual tokens attended | accuracy retained | CER | ms per step | step speedup |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${(r.keep * 100).toFixed(0)}% | ${(r.visualTokenRatio * 100).toFixed(1)}% | ${(r.accuracyRetained * 100).toFixed(1)}% | ${(r.cer * 100).toFixed(1)}% | ${r.msPerStep.toFixed(2)} | ${r.stepSpeedup.toFixed(2)}x |`);
}
if (tessRow) console.log(`| ${tessRow.system} | | | ${(tessRow.cer * 100).toFixed(1)}% | ${(1000 / tessRow.linesPerSecond).toFixed(0)} ms/line | |`);
console.log(`\nwritten to ${values.out} and ${values.plot}`);
