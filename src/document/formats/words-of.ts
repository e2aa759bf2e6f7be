/**
 * What the word-level formats (hOCR, ALTO, TSV, searchable PDF) need of a page: its lines' words, and boxes that
 * nest (a line's box holds its words, a block's its lines: hOCR and ALTO readers expect each element inside its
 * parent, while a line's crop box and a word's ink can each reach a pixel or two past the other). A line read
 * without word boxes is refused rather than written with made-up boxes.
 */
import type { BlockOut, LineOut } from '../assemble.js';
import type { Box } from '../layout/ink.js';
import type { WordOut } from '../word-boxes.js';

export function wordsOf(line: LineOut): WordOut[] {
  // A caller's mistake, not the document's: every path that writes these formats reads with words on.
  if (!line.words) throw new Error('this format needs word boxes: read the document with words on (the CLI and the API do when the format is asked for)');
  return line.words;
}

function union(first: Box, rest: readonly Box[]): Box {
  let x0 = first.x;
  let y0 = first.y;
  let x1 = first.x + first.width;
  let y1 = first.y + first.height;
  for (const b of rest) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width);
    y1 = Math.max(y1, b.y + b.height);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** A line's box grown to hold its words. */
export function lineBox(line: LineOut): Box {
  return union(line.box, wordsOf(line).map((w) => w.box));
}

/** A block's box grown to hold its lines (as lineBox gives them). */
export function blockBox(block: BlockOut): Box {
  return union(block.box, block.lines.filter((l) => l.text.trim()).map(lineBox));
}
