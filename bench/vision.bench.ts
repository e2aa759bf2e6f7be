/**
 * The vision pass alone: bundles' vision graphs timed in turn on the same batch (8 random lines of 920 px by
 * default) on one intra-op thread, as the CPU engine's vision worker runs them, each round a few passes of each
 * graph; the median round's milliseconds a pass per graph, and every round's. Comparing a distilled student with
 * its teacher (training/README.md, "The distilled vision pass") is what it is for.
 *
 *   npm run bench:vision -- [--lines 8] [--width 920] [--rounds 6] [--precision int8|fp32] BUNDLE [BUNDLE ...]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { median } from './lines.js';
import { benchOptions } from './bench-args.js';

const { values, positionals } = benchOptions(import.meta.url, {
  allowPositionals: true,
  options: {
    lines: { type: 'string', default: '8' },
    width: { type: 'string', default: '920' },
    rounds: { type: 'string', default: '6' },
    precision: { type: 'string', default: 'int8' },
  },
});
if (!positionals.length) throw new Error('name one bundle folder or more (models/specula-line-base, ...)');

/** The bundle's vision graph for the precision asked for (its float graph where it has no int8 one). */
function graphOf(bundle: string): string {
  const files = (
    JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as { files: Record<string, { path: string }> }
  ).files;
  const file = values.precision === 'int8' ? (files.visionInt8 ?? files.vision) : files.vision;
  return join(bundle, file.path);
}

const batch = Number(values.lines);
const width = Number(values.width);
const pixels = new Float32Array(batch * 32 * width).map(() => Math.random());
const feeds = {
  pixels: new ort.Tensor('float32', pixels, [batch, 1, 32, width]),
  widths: new ort.Tensor(
    'int64',
    BigInt64Array.from({ length: batch }, () => BigInt(width)),
  ),
};
const graphs = positionals.map(graphOf);
const sessions = await Promise.all(
  graphs.map((g) => ort.InferenceSession.create(g, { intraOpNumThreads: 1, interOpNumThreads: 1 })),
);
for (const s of sessions) for (let i = 0; i < 3; i++) await s.run(feeds); // warm: the arena and the kernels' caches
const rounds = graphs.map((): number[] => []);
for (let r = 0; r < Number(values.rounds); r++) {
  for (const [j, s] of sessions.entries()) {
    const t0 = performance.now();
    for (let i = 0; i < 8; i++) await s.run(feeds);
    rounds[j].push((performance.now() - t0) / 8);
  }
}
const first = median(rounds[0]);
console.log(
  `${batch} lines of ${width} px, one thread, ${values.precision}; ms a pass, median of ${values.rounds} rounds`,
);
for (const [j, g] of graphs.entries()) {
  const m = median(rounds[j]);
  const each = rounds[j].map((t) => t.toFixed(0)).join(' ');
  console.log(`${g}: ${m.toFixed(1)} ms (${(m / first).toFixed(2)}x the first); rounds ${each}`);
}
