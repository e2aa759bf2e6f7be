/**
 * Which way up a laid-out page is, asked of the model: a few of its longest lines are read by the CTC head as
 * they are and turned half round (a grey crop turned 180 degrees is its pixels in reverse order). Text the
 * model reads is read with far more confidence the right way up (mean log-probability of the emitted frames
 * about -0.04 against -0.25 on the public page sets), so the second reading is only asked for when the first
 * is unsure, and a page is turned only when the turned reading is both clearly better and confident itself:
 * a page of a script the model does not read is left as it is.
 */
import type { PreparedPage } from '../document/layout/off-thread.js';
import type { Engine } from '../engine/engine.js';
import type { GrayCrop } from '../engine/preprocess.js';

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

/**
 * Whether the page reads better turned half round. `crops` are the page's line crops, one per line box in
 * reading order (as the page will be read): the ones asked about are read from them, and their visual states kept
 * for the reading, so an upright page's orientation costs no vision pass of its own.
 */
export async function readsUpsideDown(engine: Engine, prepared: PreparedPage, crops: readonly GrayCrop[]): Promise<boolean> {
  const lines = prepared.layout.blocks.flatMap((b) => b.lines.map((l) => ({ box: l.box, asked: b.type !== 'figure' && b.type !== 'table' })));
  const sample = lines
    .map((l, i) => ({ ...l, crop: crops[i] }))
    .filter((l) => l.asked)
    .sort((a, b) => b.box.width - a.box.width)
    .slice(0, SAMPLE_LINES)
    .map((l) => l.crop);
  if (!sample.length) return false;
  const asIs = pooled(await engine.ctcConfidence(sample, { keep: true }));
  if (asIs >= SURE) return false;
  const turned = pooled(await engine.ctcConfidence(sample.map((c) => ({ ...c, data: c.data.slice().reverse() }))));
  return turned >= CONFIDENT && turned > asIs + MARGIN;
}
