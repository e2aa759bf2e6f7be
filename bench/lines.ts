/** Real line crops for benchmarks (the evaluation set's docbank lines, else the sample page) and tesseract timing. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import sharp from 'sharp';
import { cropLine, cropLines } from '../src/document/crop-lines.js';
import { decodeImage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
import type { Engine } from '../src/engine/engine.js';
import type { GrayCrop } from '../src/engine/vision/preprocess.js';
import { tesseractRead } from '../src/eval/tesseract.js';
import { benchOptions } from './bench-args.js';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);

export interface BenchLines {
  source: string;
  crops: GrayCrop[];
  /** The same lines as image files, for tesseract. */
  files: string[];
  truth: string[];
}

export async function benchLines(
  engine: Engine,
  n: number,
  evalDir: string,
  set = 'docbank_samples',
): Promise<BenchLines> {
  const manifest = join(evalDir, set, 'manifest.jsonl');
  if (existsSync(manifest)) {
    const rows = readFileSync(manifest, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; image: string; gt_text: string });
    const picked = rows.filter((r) => r.kind === 'line').slice(0, n);
    const files = picked.map((r) => join(evalDir, set, r.image));
    const crops = await Promise.all(
      files.map(async (f) => {
        const page = await decodeImage(readFileSync(f), f);
        return cropLine(page, { x: 0, y: 0, width: page.width, height: page.height }, engine.imageSpec);
      }),
    );
    return { source: `${set} lines (${files.length})`, crops, files, truth: picked.map((r) => r.gt_text) };
  }
  const sample = join(ROOT, 'examples', 'sample-page.png');
  const page = await decodeImage(readFileSync(sample), sample);
  const boxes = findLines(page);
  const one = await cropLines(page, boxes, engine.imageSpec);
  const text = readFileSync(join(ROOT, 'examples', 'sample-page.txt'), 'utf8')
    .trim()
    .split('\n');
  const dir = mkdtempSync(join(tmpdir(), 'specula-bench-'));
  const files = await Promise.all(
    boxes.map(async (b, i) => {
      const f = join(dir, `line-${i}.png`);
      await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
        .extract({ left: b.x, top: b.y, width: b.width, height: b.height })
        .png()
        .toFile(f);
      return f;
    }),
  );
  const pick = <T>(xs: T[]): T[] => Array.from({ length: n }, (_, i) => xs[i % xs.length]);
  return {
    source: `examples/sample-page.png lines, repeated to ${n}`,
    crops: pick(one),
    files: pick(files),
    truth: pick(text),
  };
}

/** Tesseract on the same line images, one process at a time (--psm 7: a single line). */
export async function tesseractLinesPerSecond(files: readonly string[]): Promise<{ seconds: number; texts: string[] }> {
  const t0 = performance.now();
  const texts: string[] = [];
  for (const f of files) texts.push(await tesseractRead(f, 7));
  return { seconds: (performance.now() - t0) / 1000, texts };
}

export interface BenchArgs {
  lines: number;
  evalDir: string;
  tesseract: boolean;
  out: string;
  batches: number[];
  /** Timed runs of each configuration, interleaved; the report takes their median. */
  rounds: number;
  /** A bundle folder other than the shipped one (a candidate checkpoint's export), or undefined. */
  model: string | undefined;
  /** The string options a benchmark adds of its own. */
  extra: Record<string, string | undefined>;
}

/** The options every benchmark takes: how many lines, from where, with tesseract or not, where the JSON goes. */
export function benchArgs(
  scriptUrl: string,
  defaultOut: string,
  own: Record<string, { type: 'string' }> = {},
): BenchArgs {
  const { values } = benchOptions(scriptUrl, {
    options: {
      ...own,
      lines: { type: 'string', default: '64' },
      'eval-dir': { type: 'string', default: process.env.SPECULA_EVAL_DIR ?? '../shared/eval' },
      'no-tesseract': { type: 'boolean', default: false },
      batches: { type: 'string', default: '1,32' },
      rounds: { type: 'string', default: '1' },
      out: { type: 'string', default: defaultOut },
      model: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number of at least 1, not "${values.rounds}"`);
  return {
    lines: Number(values.lines),
    evalDir: resolve(values['eval-dir']),
    tesseract: !values['no-tesseract'],
    out: values.out,
    batches: values.batches.split(',').map(Number),
    rounds,
    model: values.model,
    extra: Object.fromEntries(
      Object.keys(own).map((k) => [k, (values as Record<string, unknown>)[k] as string | undefined]),
    ),
  };
}

/** The median of some timings (the upper middle one for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** When, with which model (and how trained), on what machine. */
export function reportHeader(engine: Engine): Record<string, unknown> {
  return {
    created: new Date().toISOString(),
    model: engine.bundle.config.name,
    modelSteps: engine.bundle.config.training?.steps ?? null,
    machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, onnxruntime-node CPU`,
  };
}

export function writeReport(out: string, report: unknown): void {
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, JSON.stringify(report, null, 2));
}
