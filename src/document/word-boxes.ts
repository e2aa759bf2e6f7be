/**
 * A line's words on the page: the characters' places in the crop (the engine's CTC alignment of the final text)
 * split into words at spaces, each word's columns reaching half-way to its neighbours, then drawn tight round
 * the ink there (a CTC frame marks where a character was decided, not its glyph's edges), and mapped from the
 * crop to the page. A word's confidence is the mean probability the decoder gave its characters.
 */
import type { Glyph } from '../engine/ctc/align.js';
import type { LineCrop } from './crop-lines.js';
import type { Box } from './layout/ink.js';

export interface CharOut {
  text: string;
  box: Box;
  /** The probability the decoder gave the character, 0-1. */
  confidence: number;
}

export interface WordOut {
  text: string;
  box: Box;
  /** Mean probability of the word's characters, 0-1. */
  confidence: number;
  /** Asked for (character boxes): the word's characters, left to right. */
  chars?: CharOut[];
}

/** Where a crop came from: the page rectangle its whole width and height show (margins added beyond the page). */
export type CropPlace = Box;

interface Span {
  glyphs: Glyph[];
  x0: number;
  x1: number;
}

function words(glyphs: readonly Glyph[]): Span[] {
  const out: Span[] = [];
  let cur: Glyph[] = [];
  const flush = (): void => {
    if (cur.length)
      out.push({ glyphs: cur, x0: Math.min(...cur.map((g) => g.x0)), x1: Math.max(...cur.map((g) => g.x1)) });
    cur = [];
  };
  for (const g of glyphs) {
    if (/\s/u.test(g.char)) flush();
    else cur.push(g);
  }
  flush();
  return out;
}

/** Ink in a crop: pixels darker than half-way between its darkest and lightest (the crop is dark on light). */
function inkTest(crop: LineCrop): (x: number, y: number) => boolean {
  let lo = 255;
  let hi = 0;
  for (const v of crop.data) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (hi - lo < 32) return () => false;
  const thr = (lo + hi) / 2;
  return (x, y) => crop.data[y * crop.width + x] < thr;
}

/** First and last crop row with ink anywhere in the line. */
function inkRows(crop: LineCrop, ink: (x: number, y: number) => boolean): [number, number] {
  let top = -1;
  let bottom = -1;
  for (let y = 0; y < crop.height; y++) {
    for (let x = 0; x < crop.width; x++) {
      if (!ink(x, y)) continue;
      if (top < 0) top = y;
      bottom = y;
      break;
    }
  }
  return top < 0 ? [0, crop.height - 1] : [top, bottom];
}

/** Ink columns in [from, to) on rows [top, bottom]: the first and one past the last; null where there is none. */
function inkColumns(
  ink: (x: number, y: number) => boolean,
  from: number,
  to: number,
  top: number,
  bottom: number,
): [number, number] | null {
  let left = -1;
  let right = -1;
  for (let x = from; x < to; x++) {
    for (let y = top; y <= bottom; y++) {
      if (!ink(x, y)) continue;
      if (left < 0) left = x;
      right = x;
      break;
    }
  }
  return left < 0 ? null : [left, right + 1];
}

/** Crop columns [x0, x1) on rows [top, bottom] as a box on the page. */
function pageBox(crop: LineCrop, place: CropPlace, x0: number, x1: number, top: number, bottom: number): Box {
  const sx = place.width / crop.width;
  const sy = place.height / crop.height;
  const px0 = Math.round(place.x + x0 * sx);
  const py0 = Math.round(place.y + top * sy);
  const px1 = Math.round(place.x + x1 * sx);
  const py1 = Math.round(place.y + (bottom + 1) * sy);
  return { x: px0, y: py0, width: Math.max(1, px1 - px0), height: Math.max(1, py1 - py0) };
}

/**
 * Where glyphs `first`..`last` of a line lie (a run of its characters, spaces between words included): the crop
 * columns they may own (half-way to the characters either side), the ink in those columns, and that ink's box on the
 * page, as tall as the line's ink; with the mean probability of their characters. Null where the glyphs do not
 * hold that run.
 */
export function glyphRun(
  crop: LineCrop,
  place: CropPlace,
  glyphs: readonly Glyph[],
  first: number,
  last: number,
): { from: number; to: number; ink: [number, number]; box: Box; confidence: number } | null {
  if (first < 0 || last >= glyphs.length || first > last) return null;
  const ink = inkTest(crop);
  const [top, bottom] = inkRows(crop, ink);
  const before = glyphs
    .slice(0, first)
    .filter((g) => !/\s/u.test(g.char))
    .pop();
  const after = glyphs.slice(last + 1).find((g) => !/\s/u.test(g.char));
  const own = glyphs.slice(first, last + 1).filter((g) => !/\s/u.test(g.char));
  if (!own.length) return null;
  const x0 = Math.min(...own.map((g) => g.x0));
  const x1 = Math.max(...own.map((g) => g.x1));
  const from = Math.max(0, Math.floor(before ? (before.x1 + x0) / 2 : 0));
  const to = Math.min(crop.width, Math.ceil(after ? (x1 + after.x0) / 2 : crop.width));
  const cols = inkColumns(ink, from, Math.max(from + 1, to), top, bottom) ?? [x0, x1];
  const confidence = own.reduce((s, g) => s + g.prob, 0) / own.length;
  return { from, to, ink: cols, box: pageBox(crop, place, cols[0], cols[1], top, bottom), confidence };
}

/**
 * Words are as tall as their line's ink (ascenders to descenders), as a PDF's word boxes are (the font's height)
 * and as a highlight should be: "a" and "Tly" on one line get one height. Their width is their own ink's.
 * `chars`: each word's characters too, each owning the columns half-way to its neighbours' aligned frames
 * within the word, drawn tight round the ink there (glyphs that touch, as "rn" can, share the split).
 */
export function lineWords(
  crop: LineCrop,
  place: CropPlace,
  glyphs: readonly Glyph[],
  opts: { chars?: boolean } = {},
): WordOut[] {
  const spans = words(glyphs);
  const ink = inkTest(crop);
  const [lineTop, lineBottom] = inkRows(crop, ink);
  const toPage = (cx0: number, cx1: number): Box => pageBox(crop, place, cx0, cx1, lineTop, lineBottom);
  return spans.map((w, i) => {
    // The columns this word may own: half-way to the words either side.
    const from = Math.max(0, Math.floor(i ? (spans[i - 1].x1 + w.x0) / 2 : 0));
    const to = Math.min(crop.width, Math.ceil(i < spans.length - 1 ? (w.x1 + spans[i + 1].x0) / 2 : crop.width));
    // No ink where the alignment put the word (a faint scan): the aligned columns.
    const [cx0, cx1] = inkColumns(ink, from, to, lineTop, lineBottom) ?? [w.x0, w.x1];
    const word: WordOut = {
      text: w.glyphs.map((g) => g.char).join(''),
      box: toPage(cx0, cx1),
      confidence: w.glyphs.reduce((s, g) => s + g.prob, 0) / w.glyphs.length,
    };
    if (opts.chars) {
      const mid = w.glyphs.map((g) => (g.x0 + g.x1) / 2);
      word.chars = w.glyphs.map((g, k) => {
        const a = k ? Math.max(cx0, Math.floor((mid[k - 1] + mid[k]) / 2)) : cx0;
        const b = k < mid.length - 1 ? Math.min(cx1, Math.ceil((mid[k] + mid[k + 1]) / 2)) : cx1;
        const [c0, c1] = inkColumns(ink, a, Math.max(a + 1, b), lineTop, lineBottom) ?? [a, Math.max(a + 1, b)];
        return { text: g.char, box: toPage(c0, c1), confidence: g.prob };
      });
    }
    return word;
  });
}
