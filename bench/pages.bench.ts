/**
 * Whole pages, end to end, side by side in one run: Specula with its default decoding, Specula with plain greedy
 * AR decoding (our own baseline), and tesseract with one process per core (OMP_THREAD_LIMIT=1), on the same
 * pages of each set. For each: pages/s over the set, NED by the project's scorer (src/eval/ned.ts, as `npm run
 * eval` scores pages), peak RSS, and Specula's own stage times. Each Specula reading is a child process
 * (bench/pages-reader.ts: the model opened once, load time reported apart, a few pages in flight as the CLI
 * reads several files), so its peak RSS is its own. Tesseract reads the same pixels: PDF pages are rendered by
 * our renderer first (that rendering is not in tesseract's time; Specula's time includes its own).
 *
 *   npm run bench:pages -- [--sets docbank_pages,docling_pages,tesseract_pages] [--limit N] [--no-tesseract]
 *                          [--systems default,ar] [--rounds N] [--no-formulas] [--out bench/results/pages.json]
 *                          [--candidate DIR | --candidate-formulas DIR]
 *
 * --candidate DIR adds a system: another line bundle (a distilled vision pass, say) with the default decoding, read
 * beside the shipped one in the same run; --candidate-formulas DIR, another formula bundle beside the shipped one.
 *
 * With --rounds N every system reads each set N times, the order reversed every other round (A B t, t B A, ...),
 * and a row gives the median round's figures with every round's pages/s beside them: this machine's speed drifts
 * 10-20% within minutes, and one system measured minutes after another can take the drift for a difference.
 *
 * Writes the JSON, a chart beside it (pages.png: pages/s per set and system) and prints a table.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { HEAP_FLOOR_FLAG } from '../src/cli/heap-floor.js';
import { MALLOC_ARENAS_ENV } from '../src/cli/malloc-arenas.js';
import { ned } from '../src/eval/ned.js';
import { pageImageFile } from '../src/eval/page-runner.js';
import { type EvalPage, loadPageSet } from '../src/eval/page-sets.js';
import { TESSERACT_ENV, tesseractArgs, tesseractText, tesseractVersion } from '../src/eval/tesseract.js';
import { ROOT, writeReport } from './lines.js';
import type { PageJob, ReaderResult } from './pages-reader.js';
import { benchOptions } from './bench-args.js';

const run = promisify(execFile);

const { values } = benchOptions(import.meta.url, {
  options: {
    sets: { type: 'string', default: 'docbank_pages,docling_pages,tesseract_pages' },
    systems: { type: 'string', default: 'default,ar' },
    'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? '../shared/eval' },
    limit: { type: 'string' },
    'no-tesseract': { type: 'boolean', default: false },
    precision: { type: 'string' },
    'no-formulas': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/pages.json' },
    rounds: { type: 'string', default: '1' },
    candidate: { type: 'string' },
    'candidate-formulas': { type: 'string' },
  },
});
const rounds = Math.max(1, Math.floor(Number(values.rounds)));
if (values.candidate && values['candidate-formulas'])
  throw new Error('--candidate and --candidate-formulas each add the one candidate system: pass one of them');

/** Specula's systems: the decoding each passes to the reader. */
const SYSTEMS: Record<string, { label: string; args: string[] }> = {
  default: { label: 'Specula (default: ctc + joint)', args: [] },
  ar: {
    label: 'Specula, plain greedy AR (--drafter none --verifier greedy)',
    args: ['--drafter', 'none', '--verifier', 'greedy'],
  },
  lossless: {
    label: 'Specula, ctc + greedy (lossless against AR)',
    args: ['--drafter', 'ctc', '--verifier', 'greedy'],
  },
  // A line bundle measured against the shipped one in the same run (--candidate DIR), with the default decoding.
  ...(values.candidate
    ? {
        candidate: {
          label: `Specula, ${relative(ROOT, values.candidate)} (default decoding)`,
          args: ['--model', values.candidate],
        },
      }
    : {}),
  // A formula bundle measured against the shipped one in the same run (--candidate-formulas DIR).
  ...(values['candidate-formulas']
    ? {
        candidate: {
          label: `Specula, formulas by ${relative(ROOT, values['candidate-formulas'])} (default decoding)`,
          args: ['--formula-model', values['candidate-formulas']],
        },
      }
    : {}),
};

interface SystemRow {
  set: string;
  system: string;
  pages: number;
  wallSeconds: number;
  pagesPerSecond: number;
  ned: number;
  peakRssMb: number | null;
  failures: number;
  loadSeconds?: number;
  /** Specula only: per page, milliseconds in each stage (stages of different pages overlap). */
  stageMsPerPage?: Record<string, number>;
  linesPerPage?: number;
  tokensPerForward?: number;
  precision?: string;
  /** With --rounds: every round's pages/s, in the order run (the row's other figures are the median round's). */
  roundsPagesPerSecond?: number[];
  perPage: { file: string; page: number; ned: number; seconds: number; error?: string }[];
}

const evalDir = values['eval-dir'];
if (!existsSync(evalDir))
  throw new Error(`evaluation folder not found: ${evalDir} (set --eval-dir or SPECULA_EVAL_DIR)`);
const limit = values.limit ? Number(values.limit) : Infinity;
const tessVersion = values['no-tesseract'] ? null : await tesseractVersion();
if (!values['no-tesseract'] && !tessVersion)
  throw new Error('tesseract is not installed (apt-get install tesseract-ocr), or pass --no-tesseract');
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const reader = join(ROOT, 'dist', 'bench', 'pages-reader.js');
const rows: SystemRow[] = [];
const work = mkdtempSync(join(tmpdir(), 'specula-bench-pages-'));

const scoreOf = (pages: EvalPage[], texts: string[]): number[] =>
  pages.map((p, i) => ned(texts[i] ?? '', p.truth ?? ''));
const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

async function specula(set: string, system: string, pages: EvalPage[]): Promise<SystemRow> {
  const list = join(work, `${set}.json`);
  const jobs: PageJob[] = pages.map((p) => ({
    file: p.file,
    page: p.page,
    dropHeadersFooters: !p.keepsHeadersFooters,
  }));
  writeFileSync(list, JSON.stringify(jobs));
  const args = [
    HEAP_FLOOR_FLAG,
    reader,
    '--pages',
    list,
    ...SYSTEMS[system].args,
    ...(values.precision ? ['--precision', values.precision] : []),
    ...(values['no-formulas'] ? ['--no-formulas'] : []),
  ];
  const { stdout } = await run(process.execPath, args, {
    maxBuffer: 256 << 20,
    env: { ...process.env, ...MALLOC_ARENAS_ENV },
  });
  const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ReaderResult;
  const neds = scoreOf(
    pages,
    r.pages.map((x) => x.markdown),
  );
  const n = pages.length;
  return {
    set,
    system: SYSTEMS[system].label,
    pages: n,
    wallSeconds: r.wallSeconds,
    pagesPerSecond: n / r.wallSeconds,
    ned: mean(neds),
    peakRssMb: r.peakRssMb,
    failures: r.pages.filter((x) => x.error).length,
    loadSeconds: r.loadSeconds,
    stageMsPerPage: Object.fromEntries(Object.entries(r.stages).map(([k, v]) => [k, v / n])),
    linesPerPage: r.lines / n,
    tokensPerForward: r.tokensPerForward,
    precision: r.precision,
    perPage: pages.map((p, i) => ({
      file: relative(ROOT, p.file),
      page: p.page,
      ned: neds[i],
      seconds: r.pages[i].seconds,
      ...(r.pages[i].error ? { error: r.pages[i].error } : {}),
    })),
  };
}

async function tesseract(set: string, pages: EvalPage[]): Promise<SystemRow> {
  const images: string[] = [];
  for (const [i, p] of pages.entries())
    images.push(await pageImageFile(readFileSync(p.file), p, join(work, `page-${i}.png`)));
  const texts: string[] = [];
  const seconds: number[] = [];
  const rss: number[] = [];
  let next = 0;
  const env = { ...process.env, ...TESSERACT_ENV };
  // One process per core, each taking the next page as it finishes one.
  const lane = async (): Promise<void> => {
    while (next < images.length) {
      const i = next++;
      const t = performance.now();
      const argv = tesseractArgs(images[i], 3);
      const { stdout, stderr } = timeBin
        ? await run(timeBin, ['-f', 'maxrss=%M', 'tesseract', ...argv], { env, maxBuffer: 16 << 20 })
        : await run('tesseract', argv, { env, maxBuffer: 16 << 20 });
      seconds[i] = (performance.now() - t) / 1000;
      texts[i] = tesseractText(stdout);
      const m = /maxrss=(\d+)/.exec(stderr);
      if (m) rss.push(Number(m[1]) / 1024);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(cpus().length, images.length) }, lane));
  const wall = (performance.now() - t0) / 1000;
  const neds = scoreOf(pages, texts);
  return {
    set,
    system: `tesseract (${tessVersion ?? '?'}), ${cpus().length} processes, OMP_THREAD_LIMIT=1`,
    pages: pages.length,
    wallSeconds: wall,
    pagesPerSecond: pages.length / wall,
    ned: mean(neds),
    // Each process's own peak: they run side by side, so the machine holds about (processes x this).
    peakRssMb: rss.length ? Math.max(...rss) : null,
    failures: 0,
    perPage: pages.map((p, i) => ({ file: relative(ROOT, p.file), page: p.page, ned: neds[i], seconds: seconds[i] })),
  };
}

const systems = [...values.systems.split(','), ...(SYSTEMS.candidate ? ['candidate'] : [])]
  .map((s) => s.trim())
  .filter(Boolean);
for (const s of systems)
  if (!SYSTEMS[s]) throw new Error(`unknown system "${s}"; the systems are: ${Object.keys(SYSTEMS).join(', ')}`);
try {
  for (const set of values.sets
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const pages = loadPageSet(evalDir, set)
      .filter((p) => p.truth !== undefined)
      .slice(0, limit);
    console.error(`${set}: ${pages.length} pages`);
    // Interleaved within the set, one system at a time with nothing else running: ratios hold while the
    // machine's speed drifts between sets. Over several rounds the order turns round each time.
    const order = [...systems, ...(tessVersion ? ['tesseract'] : [])];
    const runs = new Map<string, SystemRow[]>(order.map((s) => [s, []]));
    for (let round = 0; round < rounds; round++) {
      for (const s of round % 2 ? [...order].reverse() : order) {
        const row = s === 'tesseract' ? await tesseract(set, pages) : await specula(set, s, pages);
        runs.get(s)?.push(row);
        console.error(
          `  ${rounds > 1 ? `round ${round + 1}: ` : ''}${row.system}: ${row.pagesPerSecond.toFixed(2)} pages/s`,
        );
      }
    }
    for (const s of order) {
      const all = runs.get(s) ?? [];
      const mid = [...all].sort((a, b) => a.pagesPerSecond - b.pagesPerSecond)[Math.floor(all.length / 2)];
      rows.push(rounds > 1 ? { ...mid, roundsPagesPerSecond: all.map((r) => r.pagesPerSecond) } : mid);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const sets = [...new Set(rows.map((r) => r.set))];
const speedups = sets.map((set) => {
  const of = (prefix: string): SystemRow | undefined => rows.find((r) => r.set === set && r.system.startsWith(prefix));
  const def = of('Specula (default');
  const ar = of('Specula, plain');
  const tess = of('tesseract');
  const cand = SYSTEMS.candidate && rows.find((r) => r.set === set && r.system === SYSTEMS.candidate.label);
  const perRound =
    def?.roundsPagesPerSecond && tess?.roundsPagesPerSecond
      ? def.roundsPagesPerSecond.map((v, i) => v / (tess.roundsPagesPerSecond?.[i] ?? NaN))
      : null;
  return {
    set,
    defaultOverTesseract: def && tess ? def.pagesPerSecond / tess.pagesPerSecond : null,
    defaultOverAr: def && ar ? def.pagesPerSecond / ar.pagesPerSecond : null,
    ...(cand && tess ? { candidateOverTesseract: cand.pagesPerSecond / tess.pagesPerSecond } : {}),
    ...(cand && def ? { candidateOverDefault: cand.pagesPerSecond / def.pagesPerSecond } : {}),
    // With --rounds: each round's ratio of the two (measured minutes apart at most).
    ...(perRound ? { defaultOverTesseractPerRound: perRound } : {}),
  };
});
const report = {
  created: new Date().toISOString(),
  machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`,
  tesseract: tessVersion,
  scoring:
    'NED of markdown with its syntax stripped and its formulas as they ' +
    'render, by src/eval/ned.ts (as `npm run eval` scores pages); page ' +
    "headers and footers dropped where a set's truth has none (docling)",
  formulas: values['no-formulas']
    ? 'not read (--no-formulas)'
    : 'read by the shipped formula bundle, as specula parse reads them (its load in loadSeconds)',
  timing:
    'pages/s = pages / wall seconds over the whole set in one process ' +
    '(Specula: model load excluded, reported as loadSeconds; tesseract: ' +
    'one process per core); stage times are per page and overlap across ' +
    'pages',
  rounds,
  speedups,
  rows,
};
writeReport(values.out, report);

// The chart: pages/s per set, one bar per system.
const colours = ['#c50', '#e9a', '#48c', '#2a7'];
const labels = [...new Set(rows.map((r) => r.system))];
const W = 760;
const H = 380;
const maxPps = Math.max(...rows.map((r) => r.pagesPerSecond)) * 1.15;
const groupW = (W - 80) / Math.max(1, sets.length);
const barW = (groupW - 30) / Math.max(1, labels.length);
const y = (v: number): number => H - 110 - (v / maxPps) * (H - 150);
const bars = sets.flatMap((set, g) =>
  labels.map((label, k) => {
    const r = rows.find((x) => x.set === set && x.system === label);
    if (!r) return '';
    const x0 = 60 + g * groupW + 15 + k * barW;
    return (
      `<rect x="${x0.toFixed(1)}" y="${y(r.pagesPerSecond).toFixed(1)}" ` +
      `width="${(barW - 4).toFixed(1)}" ` +
      `height="${(H - 110 - y(r.pagesPerSecond)).toFixed(1)}" ` +
      `fill="${colours[k % colours.length]}"/>` +
      (`<text x="${(x0 + 2).toFixed(1)}" ` +
        `y="${(y(r.pagesPerSecond) - 4).toFixed(1)}" ` +
        `font-size="11">${r.pagesPerSecond.toFixed(2)}</text>`)
    );
  }),
);
const svgOpen = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans"`;
const how = `${cpus().length} cores, same pages, ${rounds > 1 ? `median of ${rounds} rounds` : 'one run'}`;
const legend = labels.map(
  (label, k) =>
    `<rect x="60" y="${H - 75 + k * 17}" width="12" height="12" fill="${colours[k % colours.length]}"/>` +
    `<text x="78" y="${H - 65 + k * 17}">${label}</text>`,
);
const svg = `${svgOpen} font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="60" y="20">pages per second on ${how} (${report.created.slice(0, 10)})</text>
<line x1="60" y1="${H - 110}" x2="${W - 20}" y2="${H - 110}" stroke="#444"/>
<line x1="60" y1="30" x2="60" y2="${H - 110}" stroke="#444"/>
${bars.join('\n')}
${sets.map((set, g) => `<text x="${(60 + g * groupW + 15).toFixed(1)}" y="${H - 92}">${set}</text>`).join('')}
${legend.join('')}
</svg>`;
const plot = values.out.replace(/\.json$/, '') + '.png';
writeFileSync(plot, await sharp(Buffer.from(svg)).png().toBuffer());

console.log(`\n${report.machine}; ${report.timing}\n`);
// The stage names as the reader reported them (a fixed list here once left out 'orient' and shifted the rest).
const stageNames = Object.keys(rows.find((r) => r.stageMsPerPage)?.stageMsPerPage ?? {});
console.log(`| set | system | pages | pages/s | NED | peak RSS MB | load s | ms/page: ${stageNames.join(', ')} |`);
console.log('|---|---|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  const st = r.stageMsPerPage ? stageNames.map((k) => (r.stageMsPerPage?.[k] ?? 0).toFixed(0)).join(', ') : '';
  console.log(
    `| ${r.set} | ${r.system} | ${r.pages} | ${r.pagesPerSecond.toFixed(2)}` +
      ` | ${r.ned.toFixed(3)} | ${r.peakRssMb?.toFixed(0) ?? '-'} | ` +
      `${r.loadSeconds?.toFixed(2) ?? ''} | ${st} |`,
  );
}
for (const s of speedups) {
  const each = s.defaultOverTesseractPerRound
    ? ` (rounds: ${s.defaultOverTesseractPerRound.map((v) => v.toFixed(2)).join(', ')})`
    : '';
  console.log(
    `${s.set}: default ${s.defaultOverTesseract?.toFixed(2) ?? '-'}x ` +
      `tesseract's pages/s${each}, ${s.defaultOverAr?.toFixed(2) ?? '-'}x ` +
      `plain AR's` +
      (s.candidateOverTesseract
        ? `; candidate ${s.candidateOverTesseract.toFixed(2)}x tesseract's, ` +
          `${s.candidateOverDefault?.toFixed(2)}x the shipped bundle's`
        : ''),
  );
}
console.log(`\nwritten to ${values.out} and ${plot}`);
