/**
 * Which way up a laid-out page is, asked of the model: a few of its longest lines are read by the CTC head as
 * they are and turned half round (a grey crop turned 180 degrees is its pixels in reverse order). Text the
 * model reads is read with far more confidence the right way up (mean log-probability of the emitted frames
 * about -0.04 against -0.25 on the public page sets), so the second reading is only asked for when the first
 * is unsure, and a page is turned only when the turned reading is both clearly better and confident itself:
 * a page of a script the model does not read is left as it is.
 */
import { cropLines } from '../document/crop-lines.js';
import type { PreparedPage } from '../document/layout/off-thread.js';
import type { Engine } from '../engine/engine.js';

/** Lines asked about: the longest ones, where the evidence is. */
const SAMPLE_LINES = 6;
/** A first reading this confident settles it (mean log-probability per emitted frame). */
const SURE = -0.12;
/** The turned reading must beat the first by this much ... */
const MARGIN = 0.1;
/** ... and be at least this confident. */
const CONFIDENT = -0.2;

function pooled(scores: readonly { logProb: number; frames: number }[]): number {
  let sum = 0;
  let frames = 0;
  for (const s of scores) {
    if (!s.frames) continue;
    sum += s.logProb * s.frames;
    frames += s.frames;
  }
  return frames ? sum / frames : -Infinity;
}

/** Whether the page reads better turned half round. */
export async function readsUpsideDown(engine: Engine, prepared: PreparedPage): Promise<boolean> {
  const boxes = prepared.layout.blocks
    .filter((b) => b.type !== 'figure' && b.type !== 'table')
    .flatMap((b) => b.lines.map((l) => l.box))
    .sort((a, b) => b.width - a.width)
    .slice(0, SAMPLE_LINES);
  if (!boxes.length) return false;
  const crops = await cropLines(prepared.page, boxes, engine.imageSpec);
  const asIs = pooled(await engine.ctcConfidence(crops));
  if (asIs >= SURE) return false;
  const turned = pooled(await engine.ctcConfidence(crops.map((c) => ({ ...c, data: c.data.slice().reverse() }))));
  return turned >= CONFIDENT && turned > asIs + MARGIN;
}
