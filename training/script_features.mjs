// The script gate's features for a folder of line images (training/script_lines.py's): for each line, the mean of
// the CTC head's per-frame distribution as the engine computes it (the shipped bundle, its default vision graph,
// the engine's own crop and normalisation). Run after `npm run build`:
//   node training/script_features.mjs DIR [BUNDLE] > DIR/features.jsonl
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeImage } from '../dist/src/document/decode-image.js';
import { cropLineImage } from '../dist/src/document/line-image.js';
import { Engine } from '../dist/src/engine/engine.js';
import { realFrames } from '../dist/src/engine/ctc/script-gate.js';
import { runVision } from '../dist/src/engine/vision/visual-state.js';

const [dir, bundle] = process.argv.slice(2);
const engine = await Engine.open(bundle);
const rows = readFileSync(join(dir, 'labels.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const BATCH = 16;
for (let i = 0; i < rows.length; i += BATCH) {
  // A line the engine refuses (too small to be a line) is left out, as the engine would refuse it.
  const read = await Promise.all(rows.slice(i, i + BATCH).map(async (r) => {
    try {
      const crop = await cropLineImage(await decodeImage(readFileSync(r.file.startsWith('/') ? r.file : join(dir, r.file)), r.file), engine.imageSpec);
      // Wider than one vision pass: the engine would read it in pieces; left out here.
      return crop.width > engine.bundle.config.image.maxWidth ? null : { r, crop };
    } catch {
      return null;
    }
  }));
  const part = read.filter((x) => x !== null).map((x) => x.r);
  const crops = read.filter((x) => x !== null).map((x) => x.crop);
  if (!crops.length) continue;
  const state = await runVision(engine.bundle, { crops });
  part.forEach((r, b) => {
    // The mean the vision pass took as it normalised the CTC head's output, as the engine's gate reads it.
    const mean = state.reads[b].mean;
    const frames = realFrames(state, b);
    process.stdout.write(`${JSON.stringify({ file: r.file, frames, mean: Array.from(mean, (x) => Number(x.toPrecision(5))) })}\n`);
  });
  if (i % 800 === 0) process.stderr.write(`${i}/${rows.length}\n`);
}
await engine.close();
