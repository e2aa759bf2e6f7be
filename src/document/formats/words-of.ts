/**
 * What the word-level formats (hOCR, ALTO, TSV, searchable PDF) need of a page: its lines' words, and boxes that
 * nest (a line's box holds its words, a block's its lines: hOCR and ALTO readers expect each element inside its
 * parent, while a line's crop box and a word's ink can each reach a pixel or two past the other). A line read
 * without word boxes is refused rather than written with made-up boxes.
 */
import type { BlockOut, LineOut } from '../assemble.js';
import { type Box, unionBox } from '../layout/ink.js';
import type { WordOut } from '../word-boxes.js';

export function wordsOf(line: LineOut): WordOut[] {
  // A caller's mistake, not the document's: every path that writes these formats reads with words on.
  if (!line.words)
    throw new Error(
      'this format needs word boxes: read the document with words on (the ' +
        'CLI and the API do when the format is asked for)',
    );
  return line.words;
}

/** A line's box grown to hold its words. */
export function lineBox(line: LineOut): Box {
  return unionBox([line.box, ...wordsOf(line).map((w) => w.box)]);
}

/** A block's box grown to hold its lines (as lineBox gives them). */
export function blockBox(block: BlockOut): Box {
  return unionBox([block.box, ...block.lines.filter((l) => l.text.trim()).map(lineBox)]);
}
