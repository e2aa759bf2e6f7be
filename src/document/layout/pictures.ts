/**
 * Pictures: photographs, halftones, dark scan borders. They are found before the whitespace analysis and taken
 * out of the ink map, because a picture set between two columns (text wrapping around it) bridges the gutter
 * the XY-cut needs, and its dots would otherwise be read as lines of text.
 *
 * A picture is a large connected area of densely inked cells, with a mass inside it. Text is not: bold type leaves
 * most cells of a line light, the gap between lines keeps its dense cells apart, and a letter of large bold type,
 * dense as it is, is strokes a couple of cells wide with nothing inside. Line art (plots, diagrams) is thin, so it
 * is left to the block classifier, which sees its axis labels as text.
 */
import { type Box, columnInk, type InkMap } from './ink.js';

/** Share of a cell's pixels that must be ink for the cell to count as picture. */
const DENSE = 0.45;
/** Share of a row's (or column's) cells that are dense where a scan border runs along it. */
const BORDER = 0.8;
/** A picture is at least this many line heights wide and tall. */
const MIN_SIDE = 3;
/** Share of its bounding box a picture's dense cells fill (a blob, not a frame or a sweep of strokes). */
const MIN_FILL = 0.3;
/** Share of a picture's dense cells inside its mass, not on an edge (a blob, not the strokes of large type). */
const MIN_INTERIOR = 0.25;

/** Find the pictures of a page, erase their ink from `ink`, and return their boxes (top to bottom). */
export function takeOutPictures(ink: InkMap, lineHeight: number): Box[] {
  const cell = Math.max(2, Math.round(lineHeight / 4));
  const gw = Math.ceil(ink.width / cell);
  const gh = Math.ceil(ink.height / cell);
  const dense = denseCells(ink, cell, gw, gh);
  // A scan's dark border inks (nearly) whole rows or columns of cells: it goes first, unreported, so that it
  // does not join the pictures it touches into one page-sized blob.
  const erase = takeOutBorders(dense, gw, gh);
  const { found, members } = denseComponents(dense, gw, gh);
  const minCells = Math.ceil((MIN_SIDE * lineHeight) / cell);
  // Cells with all eight neighbours dense: a photograph's mass has many; letters of large bold type, strokes a
  // couple of cells wide, have few.
  const interior = (cells: readonly number[]): number =>
    cells.filter((i) => {
      const cx = i % gw;
      const cy = (i - cx) / gw;
      if (cx === 0 || cy === 0 || cx === gw - 1 || cy === gh - 1) return false;
      for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) if (!dense[i + dy * gw + dx]) return false;
      return true;
    }).length;
  const boxes: Box[] = [];
  found.forEach((c, k) => {
    if (c.x1 - c.x0 + 1 < minCells || c.y1 - c.y0 + 1 < minCells) return;
    // Large bold type is dense but thin: it stays, to be read.
    if (interior(members[k]) < MIN_INTERIOR * c.cells) return;
    if (c.cells >= MIN_FILL * (c.x1 - c.x0 + 1) * (c.y1 - c.y0 + 1)) {
      // A compact blob is a picture: its whole box goes, light areas included (their sparse dots would
      // still bridge a gutter).
      boxes.push({
        x: c.x0 * cell,
        y: c.y0 * cell,
        width: Math.min(ink.width, (c.x1 + 1) * cell) - c.x0 * cell,
        height: Math.min(ink.height, (c.y1 + 1) * cell) - c.y0 * cell,
      });
      for (let gy = c.y0; gy <= c.y1; gy++) erase.fill(1, gy * gw + c.x0, gy * gw + c.x1 + 1);
    } else {
      // A sprawling one (pictures run together, a frame) is not one box: only its own dense cells go, so text
      // that sits in the box's empty corners stays.
      for (const i of members[k]) erase[i] = 1;
    }
  });
  eraseCells(ink, erase, cell, gw, gh);
  return mergeOverlapping(boxes).sort((a, b) => a.y - b.y || a.x - b.x);
}

/** The grid of `cell`-pixel cells over the page (gw by gh), 1 where a cell is densely inked. */
function denseCells(ink: InkMap, cell: number, gw: number, gh: number): Uint8Array {
  const dense = new Uint8Array(gw * gh);
  for (let gy = 0; gy < gh; gy++) {
    const y0 = gy * cell;
    const y1 = Math.min(ink.height, y0 + cell);
    // The band's column counts (four columns at a time), then each cell's share of them.
    const counts = columnInk(ink, { x: 0, y: y0, width: ink.width, height: y1 - y0 });
    for (let gx = 0; gx < gw; gx++) {
      const x0 = gx * cell;
      const x1 = Math.min(ink.width, x0 + cell);
      let n = 0;
      for (let x = x0; x < x1; x++) n += counts[x];
      if (n >= DENSE * (y1 - y0) * (x1 - x0)) dense[gy * gw + gx] = 1;
    }
  }
  return dense;
}

/** Take a scan's dark border out of the dense cells; return the cells to erase, the border's to begin with. */
function takeOutBorders(dense: Uint8Array, gw: number, gh: number): Uint8Array {
  const erase = new Uint8Array(gw * gh);
  for (let gy = 0; gy < gh; gy++) {
    let n = 0;
    for (let gx = 0; gx < gw; gx++) n += dense[gy * gw + gx];
    if (n >= BORDER * gw) for (let gx = 0; gx < gw; gx++) if (dense[gy * gw + gx]) erase[gy * gw + gx] = 1;
  }
  for (let gx = 0; gx < gw; gx++) {
    let n = 0;
    for (let gy = 0; gy < gh; gy++) n += dense[gy * gw + gx];
    if (n >= BORDER * gh) for (let gy = 0; gy < gh; gy++) if (dense[gy * gw + gx]) erase[gy * gw + gx] = 1;
  }
  for (let i = 0; i < dense.length; i++) if (erase[i]) dense[i] = 0;
  return erase;
}

/** A component of dense cells: its box in cells (inclusive) and how many cells it holds. */
interface Component {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  cells: number;
}

/** Connected dense cells (8-neighbourhood), each component boxed in cells: the boxes, and each one's cells. */
function denseComponents(dense: Uint8Array, gw: number, gh: number): { found: Component[]; members: number[][] } {
  const seen = new Uint8Array(gw * gh);
  const members: number[][] = [];
  const found: Component[] = [];
  const stack: number[] = [];
  for (let start = 0; start < dense.length; start++) {
    if (!dense[start] || seen[start]) continue;
    seen[start] = 1;
    stack.push(start);
    let x0 = gw;
    let y0 = gh;
    let x1 = -1;
    let y1 = -1;
    let cells = 0;
    const mine: number[] = [];
    while (stack.length) {
      const i = stack.pop() as number;
      mine.push(i);
      const cx = i % gw;
      const cy = (i - cx) / gw;
      cells++;
      if (cx < x0) x0 = cx;
      if (cx > x1) x1 = cx;
      if (cy < y0) y0 = cy;
      if (cy > y1) y1 = cy;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = cy + dy;
        if (ny < 0 || ny >= gh) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = cx + dx;
          if (nx < 0 || nx >= gw) continue;
          const j = ny * gw + nx;
          if (dense[j] && !seen[j]) {
            seen[j] = 1;
            stack.push(j);
          }
        }
      }
    }
    found.push({ x0, y0, x1, y1, cells });
    members.push(mine);
  }
  return { found, members };
}

/** Erase the ink of the cells marked in `erase`, and of a cell's width around each. */
function eraseCells(ink: InkMap, erase: Uint8Array, cell: number, gw: number, gh: number): void {
  for (let gy = 0; gy < gh; gy++) {
    for (let gx = 0; gx < gw; gx++) {
      if (!erase[gy * gw + gx]) continue;
      const y0 = Math.max(0, (gy - 1) * cell);
      const y1 = Math.min(ink.height, (gy + 2) * cell);
      const x0 = Math.max(0, (gx - 1) * cell);
      const x1 = Math.min(ink.width, (gx + 2) * cell);
      for (let y = y0; y < y1; y++) ink.data.fill(0, y * ink.width + x0, y * ink.width + x1);
    }
  }
}

/** One picture's light and dark parts can be separate components whose boxes overlap: join them. */
function mergeOverlapping(boxes: Box[]): Box[] {
  const out = [...boxes];
  for (let changed = true; changed;) {
    changed = false;
    for (let i = 0; i < out.length && !changed; i++) {
      for (let j = i + 1; j < out.length; j++) {
        const a = out[i];
        const b = out[j];
        if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
          const x = Math.min(a.x, b.x);
          const y = Math.min(a.y, b.y);
          out[i] = {
            x,
            y,
            width: Math.max(a.x + a.width, b.x + b.width) - x,
            height: Math.max(a.y + a.height, b.y + b.height) - y,
          };
          out.splice(j, 1);
          changed = true;
          break;
        }
      }
    }
  }
  return out;
}
