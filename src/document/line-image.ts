/**
 * An image that is one line of text (a field cut from a form, a receipt line, a line crop), made to look like the
 * lines the model learnt from before it is read: dark ink on light paper, and margins around the ink like those
 * of training/render.py's lines. A tight box (no margin, capitals filling the height, as SROIE's receipt lines
 * are cut) scaled straight to the model's 32 px makes its glyphs half as tall again as any the model saw; a
 * light-on-dark banner read as it is gives noise.
 *
 * The same function decides whether a whole image is one line, so `specula parse` of a line image reads it
 * exactly as the engine's line path (and the eval) does, rather than through a page layout built for pages.
 */
import { loadSharp } from './sharp.js';
import { type LineCrop, type LineCropSpec, scaleToLine } from './crop-lines.js';
import type { GrayPage } from './decode-image.js';

/**
 * The ink band may fill at most this share of the crop's height: the 90th percentile over training lines
 * (600 lines of training/render.py's generator: median 0.48). Taller ink is given paper above and below.
 */
const MAX_INK_SHARE = 0.65;
/** Paper left and right of the ink, as a share of the crop's height: the training lines' median (0.17). */
const SIDE_MARGIN = 0.17;
/**
 * A row is part of an ink band when it holds this share of the busiest row's ink (a stray speck is not). The
 * margins go by the dense band (x-height or capitals); telling one line from several, by all of its rows
 * (ascenders and descenders too).
 */
const BAND_ROW = 0.1;
const LINE_ROW = 0.03;
/**
 * A band taller than this is a picture or a scan's dark border run together with a page's body, not a line (a
 * line photographed that large is read as a page, through the layout).
 */
const MAX_LINE_PX = 400;
/** One line: its band holds at least this share of the ink (a neighbour's sliver can hold a third), ... */
const LINE_INK_SHARE = 0.5;
/** ... any other band (a neighbour's sliver cut in with it) is at most this share of its height, ... */
const SLIVER_HEIGHT = 0.75;
/** ... there are at most this many bands in all (the line and a sliver above and below it), ... */
const MAX_BANDS = 3;
/**
 * ... and the image is at most this many times the band's height (a lower-case line's x-height band can be a third of
 * its crop).
 */
const MAX_HEIGHT_BANDS = 5;

export interface InkBand {
  /** First and last row (inclusive) of the band that holds most of the ink. */
  top: number;
  bottom: number;
  /** Share of the image's ink (in band rows) inside that band. */
  share: number;
  /** Tallest other band's height. */
  otherHeight: number;
  /** Bands holding at least 1% of the ink (specks left out). */
  count: number;
  /** First and last column with ink anywhere. */
  left: number;
  right: number;
}

export interface LineTone {
  /** Light ink on a dark ground: the image is turned negative before reading. */
  inverted: boolean;
  /** The paper's grey after any inversion (0-255). */
  paper: number;
  /** Pixels darker than this (after any inversion) are ink. */
  threshold: number;
}

function percentile(hist: Uint32Array, total: number, q: number): number {
  let seen = 0;
  const want = q * total;
  for (let v = 0; v < 256; v++) {
    seen += hist[v];
    if (seen > want) return v;
  }
  return 255;
}

/** Which way round the ink is: the paper is most of a line image, so the median grey is the paper's side. */
export function lineTone(img: GrayPage): LineTone {
  const hist = new Uint32Array(256);
  for (let i = 0; i < img.data.length; i++) hist[img.data[i]]++;
  const n = img.data.length;
  const dark = percentile(hist, n, 0.02);
  const light = percentile(hist, n, 0.98);
  const median = percentile(hist, n, 0.5);
  const inverted = light - dark >= 32 && median - dark < light - median;
  // After inversion grey v becomes 255 - v: the paper is the light end either way.
  const paper = inverted ? 255 - percentile(hist, n, 0.1) : percentile(hist, n, 0.9);
  const ink = inverted ? 255 - light : dark;
  return { inverted, paper, threshold: (paper + ink) / 2 };
}

interface Band {
  top: number;
  bottom: number;
  mass: number;
}

/** Ink pixels per row and per column, after any inversion. */
interface InkProfile {
  rows: Int32Array;
  cols: Int32Array;
}

function inkProfile(img: GrayPage, tone: LineTone): InkProfile {
  const { width, height, data } = img;
  const rows = new Int32Array(height);
  const cols = new Int32Array(width);
  for (let y = 0; y < height; y++) {
    const base = y * width;
    let n = 0;
    for (let x = 0; x < width; x++) {
      const v = tone.inverted ? 255 - data[base + x] : data[base + x];
      if (v < tone.threshold) {
        n++;
        cols[x]++;
      }
    }
    rows[y] = n;
  }
  return { rows, cols };
}

/** The rows of ink, grouped into bands separated by empty rows; the band holding the most ink is the line. */
export function inkBand(
  img: GrayPage,
  tone: LineTone = lineTone(img),
  rowShare = BAND_ROW,
  profile: InkProfile = inkProfile(img, tone),
): InkBand | null {
  const { rows, cols } = profile;
  const { width, height } = img;
  let busiest = 0;
  for (const r of rows) busiest = Math.max(busiest, r);
  if (busiest === 0) return null;
  const min = Math.max(1, Math.round(busiest * rowShare));
  const bands: Band[] = [];
  for (let y = 0; y < height;) {
    if (rows[y] < min) {
      y++;
      continue;
    }
    let end = y;
    let mass = 0;
    while (end < height && rows[end] >= min) mass += rows[end++];
    bands.push({ top: y, bottom: end - 1, mass });
    y = end;
  }
  const total = bands.reduce((s, b) => s + b.mass, 0);
  const tall = (b: Band): number => b.bottom - b.top + 1;
  const main = bands.reduce((a, b) => (b.mass > a.mass ? b : a));
  const otherHeight = Math.max(0, ...bands.filter((b) => b !== main).map(tall));
  const count = bands.filter((b) => b.mass >= 0.01 * total).length;
  let left = 0;
  while (left < width - 1 && cols[left] === 0) left++;
  let right = width - 1;
  while (right > left && cols[right] === 0) right--;
  return { top: main.top, bottom: main.bottom, share: main.mass / total, otherHeight, count, left, right };
}

/**
 * Whether a whole image is one line of text (perhaps with a sliver of a neighbour), not a page or a block. By all of
 * its inked rows: one band holds most of the ink, no taller than a line gets (MAX_LINE_PX), any other band (a sliver of
 * the lines above and below, at most) is much thinner, and the image is not many times taller than the band. By the
 * dense rows: one band holds most of the ink too (a page's lines each hold a small share, though its inked rows can run
 * together).
 */
export function isOneLine(img: GrayPage): boolean {
  return oneLineAlong(img, false);
}

/**
 * isOneLine, along the rows or (`down`) along the columns: the profiles of a quarter-turned image are the image's
 * own with rows and columns swapped, so nothing is turned to ask.
 */
function oneLineAlong(img: GrayPage, down: boolean): boolean {
  const height = down ? img.width : img.height;
  // Taller than the tallest line's band allows: a page, decided before any pixel is read.
  if (height > MAX_HEIGHT_BANDS * MAX_LINE_PX) return false;
  const tone = lineTone(img);
  const across = inkProfile(img, tone);
  const profile = down ? { rows: across.cols, cols: across.rows } : across;
  const dims = down ? { width: img.height, height: img.width, data: img.data } : img;
  const all = inkBand(dims, tone, LINE_ROW, profile);
  const dense = inkBand(dims, tone, BAND_ROW, profile);
  if (!all || !dense) return false;
  const h = all.bottom - all.top + 1;
  return (
    h <= MAX_LINE_PX &&
    all.count <= MAX_BANDS &&
    all.share >= LINE_INK_SHARE &&
    dense.share >= LINE_INK_SHARE &&
    all.otherHeight <= SLIVER_HEIGHT * h &&
    height <= MAX_HEIGHT_BANDS * h
  );
}

/**
 * A line on its side is at least this many times longer than thick: a few characters (a glyph or two is not turned).
 */
const MIN_TURNED_LENGTH = 3;

/**
 * How far a line image must be turned (clockwise) to lie across: 0; 90 when its line runs down the image (a line
 * cut from a page scanned on its side, a spine, a label); null when it is not one line either way (a page, a
 * block). Turned only when it is not one line as it stands (a line on its side shows its letters as bands, one
 * under another) and is long for its thickness: a single glyph that fails as a line (a colon's two dots, a digit
 * with a sliver of its neighbour) is not a line on its side. Whether 90 or 270 is right the ink cannot say: the
 * model is asked (worker/page-turn.ts).
 */
export function lineImageTurn(img: GrayPage): 0 | 90 | null {
  if (isOneLine(img)) return 0;
  return img.height >= MIN_TURNED_LENGTH * img.width && oneLineAlong(img, true) ? 90 : null;
}

/** Paper to add on each side so the ink sits in the crop as it does in a training line. */
export function lineMargins(
  img: GrayPage,
  band: InkBand,
): { top: number; bottom: number; left: number; right: number } {
  const ink = band.bottom - band.top + 1;
  const grow = Math.max(0, Math.round((ink / MAX_INK_SHARE - img.height) / 2));
  const side = Math.round((img.height + 2 * grow) * SIDE_MARGIN);
  return {
    top: grow,
    bottom: grow,
    left: Math.max(0, side - band.left),
    right: Math.max(0, side - (img.width - 1 - band.right)),
  };
}

/** A whole line image -> the crop the model reads: dark on light, training-like margins, scaled to the line height. */
export async function cropLineImage(img: GrayPage, spec: LineCropSpec): Promise<LineCrop> {
  const sharp = await loadSharp();
  const tone = lineTone(img);
  const band = inkBand(img, tone);
  const pad = band ? lineMargins(img, band) : { top: 0, bottom: 0, left: 0, right: 0 };
  const w = img.width + pad.left + pad.right;
  const h = img.height + pad.top + pad.bottom;
  let src = sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } });
  if (tone.inverted) src = src.negate();
  const paper = { r: tone.paper, g: tone.paper, b: tone.paper };
  // sharp resizes before it extends within one pipeline: pad first, then scale the padded image.
  const padded = await src
    .extend({ ...pad, background: paper })
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  const crop = await scaleToLine(sharp(padded, { raw: { width: w, height: h, channels: 1 } }), w, h, spec);
  return { ...crop, place: { x: -pad.left, y: -pad.top, width: w, height: h } };
}
