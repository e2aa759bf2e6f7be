/** Line boxes on a page -> grey crops scaled to the model's line height (sharp does the resampling). */
import type { Sharp } from 'sharp';
import { loadSharp } from './sharp.js';
import type { GrayPage } from './decode-image.js';
import type { Box } from './layout/lines.js';

export interface LineCropSpec {
  height: number;
  maxWidth: number;
}

export interface LineCrop {
  width: number;
  height: number;
  data: Uint8Array;
  /** The page rectangle the crop shows, scaled (paper margins added round a line image lie outside the page). */
  place?: Box;
}

/** A grey image `w` x `h` (a sharp pipeline) scaled to the model's line height, its width in proportion. */
export async function scaleToLine(img: Sharp, w: number, h: number, spec: LineCropSpec): Promise<LineCrop> {
  const width = Math.max(1, Math.min(spec.maxWidth, Math.round((w * spec.height) / h)));
  const { data, info } = await img
    .resize({ width, height: spec.height, fit: 'fill' })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) throw new Error(`line crop came back with ${info.channels} channels`);
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

export async function cropLine(page: GrayPage, box: Box, spec: LineCropSpec): Promise<LineCrop> {
  const sharp = await loadSharp();
  const img = sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } }).extract({
    left: box.x,
    top: box.y,
    width: box.width,
    height: box.height,
  });
  return scaleToLine(img, box.width, box.height, spec).then((crop) => ({ ...crop, place: box }));
}

export function cropLines(page: GrayPage, boxes: readonly Box[], spec: LineCropSpec): Promise<LineCrop[]> {
  return Promise.all(boxes.map((b) => cropLine(page, b, spec)));
}

/** Columns [x0, x1) of a line crop as a crop of their own (a formula set within the line, for the formula reader). */
export function cropColumns(crop: LineCrop, x0: number, x1: number): LineCrop {
  const a = Math.max(0, Math.min(crop.width - 1, Math.floor(x0)));
  const width = Math.max(1, Math.min(crop.width, Math.ceil(x1)) - a);
  const data = new Uint8Array(width * crop.height);
  for (let y = 0; y < crop.height; y++)
    data.set(crop.data.subarray(y * crop.width + a, y * crop.width + a + width), y * width);
  return { width, height: crop.height, data };
}
