/**
 * The first page path: image bytes -> grey page -> text lines -> crops -> one engine call -> text in
 * reading order. The worker owns this orchestration; document and engine do not know each other.
 */
import type { Box } from '../document/lines.js';
import { findLines } from '../document/lines.js';
import { cropLines } from '../document/crop-lines.js';
import { decodeImage, DEFAULT_LIMITS, type ImageLimits } from '../document/decode-image.js';
import type { Engine, ReadMetrics, ReadOptions } from '../engine/engine.js';

export interface PageLine {
  box: Box;
  text: string;
}

export interface PageReading {
  width: number;
  height: number;
  lines: PageLine[];
  text: string;
  metrics: ReadMetrics;
}

export async function readPage(engine: Engine, bytes: Uint8Array, file: string, read: ReadOptions = {}, limits: ImageLimits = DEFAULT_LIMITS): Promise<PageReading> {
  const page = await decodeImage(bytes, file, limits);
  const boxes = findLines(page);
  const crops = await cropLines(page, boxes, engine.imageSpec);
  const { lines, metrics } = await engine.readLines(crops, read);
  const out = boxes.map((box, i) => ({ box, text: lines[i].text }));
  return { width: page.width, height: page.height, lines: out, text: out.map((l) => l.text).join('\n'), metrics };
}
