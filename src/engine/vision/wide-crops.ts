/**
 * Lines too long for the decoder to read whole, cut into pieces at word spaces, read as lines of their own and
 * joined again with a space. The model learnt from lines of at most 120 characters (training/train.py --cur-full)
 * and its reading of a longer one falls apart towards the end: synthetic prose in held-out faces read whole has a
 * CER of 0.5% at 115 characters, 5% at 120, 11% at 130 and 27% at 180. A full-width line of a report or a
 * landscape table holds 150-250. The engine reads every line whole unless the CTC head counts more than the
 * bundle's `image.readChars` characters on it (or it is wider than one vision pass): then in pieces sized to hold
 * about that many, at most `image.readWidth` columns.
 */
import type { Glyph } from '../ctc/align.js';
import { type GrayCrop, grayRange } from './preprocess.js';

/**
 * A piece of a wide crop: its pixels, the crop column it starts at, and crop columns per piece column (1 unless
 * squeezed).
 */
export interface CropPiece {
  crop: GrayCrop;
  x: number;
  scale: number;
}

/** A wide line may be at most this many pieces long; the document layer scales anything longer down to it. */
export const MAX_PIECES = 8;

/**
 * Per column of a crop: whether it has ink (darker than half-way from its lightest to its darkest pixel), and how
 * many rows lie between its topmost and bottommost ink (0: blank).
 */
export function columnExtents(crop: GrayCrop): Uint16Array {
  const { width, height, data } = crop;
  const [lo, hi] = grayRange(data);
  const t = (lo + hi) / 2;
  const extent = new Uint16Array(width);
  for (let x = 0; x < width; x++) {
    let top = -1;
    let bottom = -1;
    for (let y = 0; y < height; y++) {
      if (data[y * width + x] < t) {
        if (top < 0) top = y;
        bottom = y;
      }
    }
    extent[x] = top < 0 ? 0 : bottom - top + 1;
  }
  return extent;
}

/**
 * Where to cut a line `extent.length` columns wide into pieces of about `readWidth`: greedily from the left, mid-way
 * in the widest blank run in the second half of the next piece's reach with letters (ink at least 40% as tall as the
 * line's 90th-percentile column: not dots, commas, rules) on both sides, wider than its letter gaps: a word space, so
 * no word is split and no piece starts or ends in leader dots (alone, read as invented words). Without one (leader
 * dots, a long URL): on to the next word space or the line's end, up to `maxWidth` (one vision pass), past that the
 * reach's widest blank run, or its end. No word space at all: not cut (squeezed to `maxWidth`, as lines were before).
 */
export function cutColumns(extent: Uint16Array, readWidth: number, maxWidth = readWidth): number[] {
  const width = extent.length;
  const inked = Array.from(extent)
    .filter((e) => e > 0)
    .sort((a, b) => a - b);
  const tall = inked.length ? inked[Math.floor(0.9 * (inked.length - 1))] : 0;
  const letter = Math.max(1, 0.4 * tall);
  // A letter within half a letter's height of the gap: a letter's edge can be thin (the side of an "o") and a
  // word can end in a full stop or a comma, but a run of leader dots has nothing that tall that near.
  const near = Math.max(2, Math.round(0.5 * tall));
  const lettered = (from: number, step: 1 | -1): boolean => {
    for (let x = from, n = 0; x >= 0 && x < width && n < near; x += step, n++) if (extent[x] >= letter) return true;
    return false;
  };
  /** Blank runs [a, b) of [from, to). */
  const runs = (from: number, to: number): [number, number][] => {
    const out: [number, number][] = [];
    for (let x = from; x < to;) {
      if (extent[x]) {
        x++;
        continue;
      }
      let end = x;
      while (end < to && !extent[end]) end++;
      out.push([x, end]);
      x = end;
    }
    return out;
  };
  const betweenLetters = ([a, b]: [number, number]): boolean => lettered(a - 1, -1) && lettered(b, 1);
  // A space between words is wider than the gaps between letters, which outnumber word spaces: at least twice the
  // line's median gap between letters (and a sixth of the tall letters' height).
  const gaps = runs(0, width)
    .filter(betweenLetters)
    .map(([a, b]) => b - a)
    .sort((a, b) => a - b);
  const space = Math.max(2, Math.round(tall / 6), 2 * (gaps[Math.floor(gaps.length / 2)] ?? 0));
  const isWordSpace = (r: [number, number]): boolean => r[1] - r[0] >= space && betweenLetters(r);
  const mid = ([a, b]: [number, number]): number => a + Math.floor((b - a) / 2);
  // Ties go right: the pieces stay as long as they may.
  const widest = (rs: [number, number][]): [number, number] | undefined =>
    rs.reduce<[number, number] | undefined>((w, r) => (!w || r[1] - r[0] >= w[1] - w[0] ? r : w), undefined);
  const cuts: number[] = [];
  let start = 0;
  while (width - start > readWidth) {
    const reach = runs(start + Math.floor(readWidth / 2), start + readWidth);
    const word = widest(reach.filter(isWordSpace));
    let cut: number;
    if (word) cut = mid(word);
    else {
      const on = runs(start + readWidth, Math.min(width, start + maxWidth)).find(isWordSpace);
      if (on) cut = mid(on);
      // The rest fits one vision pass, or has no word space at all (a rule, a band of ornament): read it whole.
      else if (width - start <= maxWidth || !runs(start, width).some(isWordSpace)) break;
      else {
        const blank = widest(reach);
        cut = blank ? mid(blank) : start + readWidth - 1;
      }
    }
    cuts.push(cut);
    start = cut;
  }
  return cuts;
}

/** Columns [x0, x1) of a crop, squeezed (linear interpolation) to at most `maxWidth`. */
function slice(crop: GrayCrop, x0: number, x1: number, maxWidth: number): GrayCrop {
  const w = Math.min(x1 - x0, maxWidth);
  const data = new Uint8Array(w * crop.height);
  if (w === x1 - x0) {
    for (let y = 0; y < crop.height; y++) data.set(crop.data.subarray(y * crop.width + x0, y * crop.width + x1), y * w);
    return { width: w, height: crop.height, data };
  }
  const scale = (x1 - x0) / w;
  for (let x = 0; x < w; x++) {
    const sx = Math.min(x1 - x0 - 1, Math.max(0, (x + 0.5) * scale - 0.5));
    const a = Math.floor(sx);
    const b = Math.min(x1 - x0 - 1, a + 1);
    const f = sx - a;
    for (let y = 0; y < crop.height; y++) {
      const row = y * crop.width + x0;
      data[y * w + x] = Math.round((1 - f) * crop.data[row + a] + f * crop.data[row + b]);
    }
  }
  return { width: w, height: crop.height, data };
}

/** The crop as pieces the decoder reads whole (the crop itself, alone, when it is narrow enough). */
export function cutWideCrop(crop: GrayCrop, readWidth: number, maxWidth = readWidth): CropPiece[] {
  if (crop.width <= readWidth) return [{ crop, x: 0, scale: 1 }];
  const cuts = cutColumns(columnExtents(crop), readWidth, maxWidth);
  const edges = [0, ...cuts, crop.width];
  return edges.slice(1).map((end, i) => {
    const piece = slice(crop, edges[i], end, maxWidth);
    return { crop: piece, x: edges[i], scale: (end - edges[i]) / piece.width };
  });
}

/** The parts of a line reading that pieces join into. */
export interface PieceReading {
  text: string;
  confidence: number;
  ctcText: string;
  glyphs?: Glyph[];
  /** Read by the CTC head alone, in a script the model lacks (LineReading.unread). */
  unread?: boolean;
}

/**
 * One reading from its pieces' readings, left to right: texts joined by a space (a piece with nothing on it adds
 * nothing), the confidence averaged over the characters, glyphs moved to the whole crop's columns with a space
 * between pieces.
 */
export function joinPieces(pieces: readonly CropPiece[], readings: readonly PieceReading[]): PieceReading {
  const texts: string[] = [];
  const ctc: string[] = [];
  let weighted = 0;
  let chars = 0;
  let glyphs: Glyph[] | undefined = readings.every((r) => r.glyphs) ? [] : undefined;
  readings.forEach((r, i) => {
    const text = r.text.trim();
    if (r.ctcText.trim()) ctc.push(r.ctcText.trim());
    if (!text) return;
    texts.push(text);
    weighted += r.confidence * text.length;
    chars += text.length;
    if (glyphs && r.glyphs) {
      // The reading's own glyphs, less any space it began or ended with (trimmed from its text too).
      const lead = r.text.length - r.text.trimStart().length;
      const { x, scale } = pieces[i];
      const own = r.glyphs
        .slice(lead, lead + text.length)
        .map((g) => ({ ...g, x0: x + g.x0 * scale, x1: x + g.x1 * scale }));
      if (glyphs.length && own.length)
        glyphs.push({ char: ' ', x0: glyphs[glyphs.length - 1].x1, x1: own[0].x0, prob: 1 });
      glyphs = glyphs.concat(own);
    }
  });
  return {
    text: texts.join(' '),
    confidence: chars ? weighted / chars : readings.reduce((s, r) => s + r.confidence, 0) / readings.length,
    ctcText: ctc.join(' '),
    ...(glyphs ? { glyphs } : {}),
    // A line is unread when every piece of it is.
    ...(readings.length && readings.every((r) => r.unread) ? { unread: true } : {}),
  };
}

/**
 * Tokens of a line read in pieces, streamed in the line's order: the first piece's as they come, a later piece's
 * held until every piece before it is done, then sent on with a space before its first.
 */
export class PieceStream {
  private next = 0;
  private sent = false;
  private readonly done: boolean[];
  private readonly held: [string, readonly boolean[], number][][];
  private readonly opened: boolean[];

  constructor(
    pieces: number,
    private readonly out: (text: string, fromDraft: readonly boolean[], drafted: number) => void,
  ) {
    this.done = new Array<boolean>(pieces).fill(false);
    this.held = Array.from({ length: pieces }, () => []);
    this.opened = new Array<boolean>(pieces).fill(false);
  }

  tokens(piece: number, text: string, fromDraft: readonly boolean[], drafted: number): void {
    if (piece === this.next) this.send(piece, text, fromDraft, drafted);
    else this.held[piece].push([text, fromDraft, drafted]);
  }

  finished(piece: number): void {
    this.done[piece] = true;
    while (this.next < this.done.length && this.done[this.next]) {
      this.next++;
      if (this.next < this.done.length)
        for (const [t, f, d] of this.held[this.next].splice(0)) this.send(this.next, t, f, d);
    }
  }

  private send(piece: number, text: string, fromDraft: readonly boolean[], drafted: number): void {
    if (!text) return;
    if (!this.opened[piece]) {
      this.opened[piece] = true;
      if (this.sent) {
        text = ` ${text}`;
        fromDraft = [false, ...fromDraft];
      }
    }
    this.sent = true;
    this.out(text, fromDraft, drafted);
  }
}
