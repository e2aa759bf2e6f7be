/**
 * Small print laid out on an enlarged copy: in a screenshot, a table cut from a 72-dpi page or a thumbnail, a line is
 * a few pixels tall and its thin strokes (a 1, a dash, a light face's hairlines) are grey, lighter than the ink
 * threshold, so the layout sees scraps of letters and cuts cells and columns at them. Enlarged smoothly, the
 * strokes darken and join and the layout sees words. Its boxes are then brought back to the page, whose own pixels
 * are what the lines are read from (the model's input height is reached by resizing the crop either way).
 */
import type { GrayPage } from '../decode-image.js';
import { throughSharp } from '../sharp.js';
import { analyzeLayout, lineHeightOf, type LayoutLine, type PageLayout } from './analyze.js';
import { type Box, inkOf } from './ink.js';

/** Lines shorter than this (pixels, ascender to descender) are small print. */
const SMALL_PRINT_PX = 10;
/** ... and are laid out enlarged to about this height. */
const TARGET_PX = 16;
/** An enlarged copy holds at most this many pixels (a 300-dpi A4 page holds 8.7 million). */
const MAX_PIXELS = 12_000_000;

/** The page's layout, found on a copy enlarged by a whole factor where its print is small. */
export async function smallPrintLayout(page: GrayPage): Promise<PageLayout> {
  const lh = lineHeightOf(inkOf(page));
  const fits = Math.floor(Math.sqrt(MAX_PIXELS / (page.width * page.height)));
  const scale = lh >= SMALL_PRINT_PX ? 1 : Math.min(Math.ceil(TARGET_PX / Math.max(1, lh)), 4, fits);
  if (scale < 2) return analyzeLayout(page, lh);
  const big = await throughSharp(page, (img) =>
    img.resize(page.width * scale, page.height * scale, { kernel: 'cubic' }),
  );
  // The line height as measured here, enlarged: on the copy, hairline rules that were grey join into full-height
  // strokes, and a page boxed by them would measure as one tall "line".
  return shrinkLayout(analyzeLayout(big, lh * scale), scale, page);
}

/** A layout of the page enlarged `scale` times, in the page's own pixels: each box the smallest holding its own. */
function shrinkLayout(layout: PageLayout, scale: number, page: { width: number; height: number }): PageLayout {
  const shrink = (b: Box): Box => {
    const x0 = Math.floor(b.x / scale);
    const y0 = Math.floor(b.y / scale);
    const x1 = Math.min(page.width, Math.ceil((b.x + b.width) / scale));
    const y1 = Math.min(page.height, Math.ceil((b.y + b.height) / scale));
    return { x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(1, y1 - y0) };
  };
  // A table's cells hold the same line objects as its block's lines: each is brought back once.
  const lines = new Map<LayoutLine, LayoutLine>();
  const line = (l: LayoutLine): LayoutLine => {
    let out = lines.get(l);
    if (!out) lines.set(l, (out = { ...l, box: shrink(l.box), band: shrink(l.band) }));
    return out;
  };
  return {
    ...layout,
    width: page.width,
    height: page.height,
    lineHeight: layout.lineHeight / scale,
    rules: layout.rules.map((r) => ({ ...r, box: shrink(r.box) })),
    blocks: layout.blocks.map((b) => ({
      ...b,
      box: shrink(b.box),
      lines: b.lines.map(line),
      ...(b.table ? { table: { ...b.table, cells: b.table.cells.map((row) => row.map((c) => c.map(line))) } } : {}),
    })),
  };
}
