// Runs two ONNX vision graphs (onnxruntime, CPU, one thread) on the same random lines and exits non-zero unless
// every output is identical: vision_rewrite.py's check that a rewrite computes what the graph did. Then times them,
// in turn, over passes of the engine's shapes (runs of 1-8 lines, at most 1,600 columns).
//   node training/same_outputs.mjs OLD.onnx NEW.onnx
import { createRequire } from 'node:module';

const require = createRequire(new URL('../package.json', import.meta.url));
const ort = require('onnxruntime-node');
const [oldPath, newPath] = process.argv.slice(2);
const open = (p) => ort.InferenceSession.create(p, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const [a, b] = await Promise.all([open(oldPath), open(newPath)]);
let seed = 20261205;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const differing = [];
const bytes = (t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
// Paper (0) mostly, ink (1) and greys between: the quantised input's whole range.
const randomPixels = (rows, width) => {
  const pixels = new Float32Array(rows * 32 * width);
  for (let i = 0; i < pixels.length; i++) pixels[i] = rnd() < 0.75 ? 0 : rnd() < 0.5 ? 1 : Math.round(rnd() * 255) / 255;
  return new ort.Tensor('float32', pixels, [rows, 1, 32, width]);
};
// Batch shapes as the engine runs them (up to 1,600 columns a run), widths random multiples of 4.
for (const [rows, width] of [[1, 4], [1, 200], [3, 532], [8, 200], [5, 320], [2, 800], [1, 1600]]) {
  for (let trial = 0; trial < 3; trial++) {
    const pixels = randomPixels(rows, width);
    const widths = BigInt64Array.from({ length: rows }, (_, r) => BigInt(r === 0 ? width : 4 * (1 + Math.floor(rnd() * (width / 4)))));
    const feeds = { pixels, widths: new ort.Tensor('int64', widths, [rows]) };
    const [x, y] = [await a.run(feeds), await b.run(feeds)];
    const names = [...new Set([...a.outputNames, ...b.outputNames])];
    for (const name of names) {
      // Bit for bit: the bytes, so -0 against 0 or one NaN against another counts too.
      const same = x[name] && y[name] && x[name].type === y[name].type && x[name].dims.join() === y[name].dims.join() && bytes(x[name]).equals(bytes(y[name]));
      if (!same) differing.push(`${name} (${rows} x ${width})`);
    }
  }
}
if (differing.length) {
  console.error(`the rewritten graph differs: ${differing.slice(0, 5).join(', ')}${differing.length > 5 ? ', ...' : ''}`);
  process.exit(1);
}
console.log('same outputs on 21 batches of lines');

// Five rounds to warm up (the first passes fault in the arenas' pages), then twelve, the order swapped each round.
const shapes = [[2, 800], [4, 400], [1, 1600], [8, 200], [3, 532], [2, 640]].map(([rows, width]) => ({
  pixels: randomPixels(rows, width),
  widths: new ort.Tensor('int64', new BigInt64Array(rows).fill(BigInt(width)), [rows]),
}));
const ms = [0, 0];
for (let round = 0; round < 17; round++) {
  for (const k of round % 2 ? [1, 0] : [0, 1]) {
    const t0 = performance.now();
    for (const feeds of shapes) await [a, b][k].run(feeds);
    if (round >= 5) ms[k] += (performance.now() - t0) / 12;
  }
}
console.log(`a pass over six batches: ${ms[0].toFixed(1)} ms before, ${ms[1].toFixed(1)} ms after (${(ms[1] / ms[0]).toFixed(3)}x)`);
