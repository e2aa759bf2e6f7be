/**
 * Which way up a laid-out page is, asked of the model: a few of its longest lines are read by the CTC head as
 * they are and turned half round (a grey crop turned 180 degrees is its pixels in reverse order). Text the
 * model reads is read with far more confidence the right way up, so the second reading is only asked for when the first
 * is unsure, and a page is turned only when the turned reading is both clearly better and confident itself:
 * a page of a script the model does not read is left as it is.
 */
import type { LineCrop } from '../document/crop-lines.js';
import type { GrayPage } from '../document/decode-image.js';
import type { PreparedPage } from '../document/layout/off-thread.js';
import { cropLineImage, lineImageTurn } from '../document/line-image.js';
import { turnPage } from '../document/orientation.js';
import type { Engine } from '../engine/engine.js';
import type { GrayCrop } from '../engine/vision/preprocess.js';
import { unreadScriptOf } from './page-script.js';

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
 * Whether crops read better turned half round (a grey crop turned 180 degrees is its pixels in reverse order).
 */
async function readsBetterHalfRound(engine: Engine, sample: readonly GrayCrop[]): Promise<PageReading> {
  if (!sample.length) return { upsideDown: false, unreadScript: null };
  // Their states are kept for the page's reading only when it comes soon (a batch's worth of lines or fewer queued
  // ahead of it), because behind a long queue kept states only raise the peak memory; the price is a second vision
  // pass over those lines.
  const first = await engine.ctcConfidence(sample, { keep: engine.stats.queued <= engine.maxBatch });
  const asIs = pooled(first);
  const upright = { upsideDown: false, unreadScript: unreadScriptOf(first) };
  if (asIs >= SURE) return upright;
  // A Latin page upside down can look like an unread script: the turned reading is asked for either way.
  const second = await engine.ctcConfidence(sample.map((c) => ({ ...c, data: c.data.slice().reverse() })));
  const turned = pooled(second);
  return turned >= CONFIDENT && turned > asIs + MARGIN
    ? { upsideDown: true, unreadScript: unreadScriptOf(second) }
    : upright;
}

/** Which way up a page is read, and the script it is in where the model lacks it (worker/page-script.ts). */
export interface PageReading {
  upsideDown: boolean;
  unreadScript: string | null;
}

/**
 * Whether the page reads better turned half round, and whether it is in a script the model lacks. `crops` are the
 * page's line crops, one per line box in reading order (as the page will be read): the ones asked about are read
 * from them, and their visual states kept for the reading when it comes soon, so an upright page read at once costs
 * no vision pass of its own for them.
 */
export async function howToRead(
  engine: Engine,
  prepared: PreparedPage,
  crops: readonly GrayCrop[],
): Promise<PageReading> {
  const lines = prepared.layout.blocks.flatMap((b) =>
    b.lines.map((l) => ({ box: l.box, asked: b.type !== 'figure' && b.type !== 'table' })),
  );
  const sample = lines
    .map((l, i) => ({ ...l, crop: crops[i] }))
    .filter((l) => l.asked)
    .sort((a, b) => b.box.width - a.box.width)
    .slice(0, SAMPLE_LINES)
    .map((l) => l.crop);
  return readsBetterHalfRound(engine, sample);
}

/**
 * A line image as the model reads it (the engine's line path, the eval's): turned across when its line runs down
 * the image, the model choosing between the two quarter turns as it does for pages. The layout worker and
 * read-document decide a line image given to `specula parse` the same way.
 */
export async function lineImageCrop(engine: Engine, img: GrayPage): Promise<LineCrop> {
  const turn = lineImageTurn(img) ?? 0;
  if (turn === 0) return cropLineImage(img, engine.imageSpec);
  const crop = await cropLineImage(await turnPage(img, turn), engine.imageSpec);
  return (await readsBetterHalfRound(engine, [crop])).upsideDown
    ? cropLineImage(await turnPage(img, 270), engine.imageSpec)
    : crop;
}
