/**
 * From the page as it was read (turned upright by quarter turns, then straightened by a small skew) back to the
 * page as it came in: the frame every box of a page's result is given in, so a word box lands on the word in
 * the user's own image or PDF page whichever way it was scanned.
 */
import type { PageOut } from './assemble.js';
import type { Box } from './layout/ink.js';
import { homography, mapPoint, type Point as XY } from './homography.js';
import type { Turn } from './orientation.js';

export interface PageFrame {
  /** The page as it came in (the image, or the PDF page as rendered). */
  width: number;
  height: number;
  /** Clockwise quarter turns applied to read it upright. */
  turn: Turn;
  /** Then the skew undone: the upright page was turned back by this many degrees (deskew.ts), about its centre. */
  degrees: number;
  /**
   * A photograph's sheet, found and straightened before all that (capture.ts): its corners in the page as it came
   * in (top-left, top-right, bottom-right, bottom-left) and the upright rectangle it was mapped to.
   */
  sheet?: { corners: XY[]; width: number; height: number };
}

type Point = [number, number];

/** An affine map in PDF's row-vector convention: x' = a x + c y + e, y' = b x + d y + f. */
export type Matrix = [number, number, number, number, number, number];

/** `a` then `b`. */
export function concat(a: Matrix, b: Matrix): Matrix {
  return [
    a[0] * b[0] + a[1] * b[2],
    a[0] * b[1] + a[1] * b[3],
    a[2] * b[0] + a[3] * b[2],
    a[2] * b[1] + a[3] * b[3],
    a[4] * b[0] + a[5] * b[2] + b[4],
    a[4] * b[1] + a[5] * b[3] + b[5],
  ];
}

export function invert(m: Matrix): Matrix {
  const det = m[0] * m[3] - m[1] * m[2];
  return [
    m[3] / det,
    -m[1] / det,
    -m[2] / det,
    m[0] / det,
    (m[2] * m[5] - m[3] * m[4]) / det,
    (m[1] * m[4] - m[0] * m[5]) / det,
  ];
}

export function apply(m: Matrix, [x, y]: Point): Point {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

/** The read page (upright and straight) -> the page as it came in. */
export function readToSource(frame: PageFrame): Matrix {
  const w = frame.sheet?.width ?? frame.width;
  const h = frame.sheet?.height ?? frame.height;
  const upright = frame.turn === 90 || frame.turn === 270 ? { w: h, h: w } : { w, h };
  // deskew.ts turned the upright page by -degrees about its centre (sharp: positive is clockwise): turn it back.
  const t = (frame.degrees * Math.PI) / 180;
  const [cos, sin] = [Math.cos(t), Math.sin(t)];
  const [cx, cy] = [upright.w / 2, upright.h / 2];
  const straight: Matrix = [cos, sin, -sin, cos, cx - cx * cos + cy * sin, cy - cx * sin - cy * cos];
  // turnPage turned the incoming page (or its straightened sheet) clockwise by `turn`: undo it.
  const W = frame.sheet?.width ?? frame.width;
  const H = frame.sheet?.height ?? frame.height;
  const unturn: Record<Turn, Matrix> = {
    0: [1, 0, 0, 1, 0, 0],
    90: [0, -1, 1, 0, 0, H],
    180: [-1, 0, 0, -1, W, H],
    270: [0, 1, -1, 0, W, 0],
  };
  return concat(straight, unturn[frame.turn]);
}

function cornersOf(box: Box): Point[] {
  return [
    [box.x, box.y],
    [box.x + box.width, box.y],
    [box.x, box.y + box.height],
    [box.x + box.width, box.y + box.height],
  ];
}

/** The smallest box holding `box`'s corners mapped by `m`. */
export function mapBox(m: Matrix, box: Box): Box {
  return boundsOf(cornersOf(box).map((p) => apply(m, p)));
}

function boundsOf(pts: Point[]): Box {
  const x0 = Math.min(...pts.map((p) => p[0]));
  const y0 = Math.min(...pts.map((p) => p[1]));
  return {
    x: x0,
    y: y0,
    width: Math.max(...pts.map((p) => p[0])) - x0,
    height: Math.max(...pts.map((p) => p[1])) - y0,
  };
}

/** The straightened sheet's rectangle -> the photograph it was found in. */
function sheetToSource(sheet: NonNullable<PageFrame['sheet']>): (p: Point) => Point {
  const rect = [
    { x: 0, y: 0 },
    { x: sheet.width, y: 0 },
    { x: sheet.width, y: sheet.height },
    { x: 0, y: sheet.height },
  ];
  const h = homography(rect, sheet.corners);
  if (!h) return (p) => p;
  return ([x, y]) => {
    const q = mapPoint(h, { x, y });
    return [q.x, q.y];
  };
}

/** Whether boxes of the read page are boxes of the page as it came in. */
function readAsItCame(frame: PageFrame): boolean {
  return frame.turn === 0 && !frame.degrees && !frame.sheet;
}

/** Boxes of the read page -> the smallest boxes holding them in the page as it came in, clipped to that page. */
export function sourceBoxes(frame: PageFrame): (box: Box) => Box {
  if (readAsItCame(frame)) return (box) => box;
  const read = readToSource(frame);
  const sheet = frame.sheet ? sheetToSource(frame.sheet) : (p: Point): Point => p;
  return (box) => {
    const m = boundsOf(cornersOf(box).map((p) => sheet(apply(read, p))));
    const x0 = Math.max(0, Math.floor(m.x));
    const y0 = Math.max(0, Math.floor(m.y));
    const x1 = Math.min(frame.width, Math.ceil(m.x + m.width));
    const y1 = Math.min(frame.height, Math.ceil(m.y + m.height));
    return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
  };
}

export function toSourceBox(frame: PageFrame, box: Box): Box {
  return sourceBoxes(frame)(box);
}

/**
 * A page read in `frame`'s turned and straightened page, with every box (blocks, lines, words) in the page as it came
 * in.
 */
export function inSourceFrame(page: PageOut, frame: PageFrame): PageOut {
  // Most pages are read as they came: nothing to map.
  if (readAsItCame(frame)) return { ...page, width: frame.width, height: frame.height, skew: 0 };
  const sheet = frame.sheet ? { sheet: frame.sheet.corners } : {};
  const map = sourceBoxes(frame);
  return {
    ...page,
    width: frame.width,
    height: frame.height,
    skew: frame.degrees,
    ...sheet,
    blocks: page.blocks.map((b) => ({
      ...b,
      box: map(b.box),
      ...(b.table?.cellBoxes
        ? { table: { ...b.table, cellBoxes: b.table.cellBoxes.map((row) => row.map((c) => c && map(c))) } }
        : {}),
      lines: b.lines.map((l) => ({
        ...l,
        box: map(l.box),
        ...(l.words
          ? {
              words: l.words.map((w) => ({
                ...w,
                box: map(w.box),
                ...(w.chars ? { chars: w.chars.map((c) => ({ ...c, box: map(c.box) })) } : {}),
              })),
            }
          : {}),
      })),
    })),
  };
}
