/**
 * Boxed notes: blocks set between two horizontal rules of about the same span, close above and below them (a
 * warning, a tip, a framed aside). They are marked `boxed`, and their markdown becomes a block quote: set apart as
 * the page sets them apart, not run into the text around them.
 */
import type { Box } from './ink.js';

/** What a note is told by: a block's type and box; `boxed` is set on those between the rules. */
interface Framed {
  type: string;
  box: Box;
  boxed?: boolean;
}

/** Rules further apart than this many line heights frame a page or a section, not a note. */
const MAX_NOTE = 16;
/** A rule stands this close (in line heights) above or below what it frames. */
const NEAR = 2;

export function markBoxed(blocks: readonly Framed[], hrules: readonly Box[], lh: number): void {
  const rules = [...hrules].sort((a, b) => a.y - b.y);
  for (let i = 0; i + 1 < rules.length; i++) {
    const [top, bottom] = [rules[i], rules[i + 1]];
    const end = (r: Box): number => r.x + r.width;
    const [left, right] = [Math.min(top.x, bottom.x), Math.max(end(top), end(bottom))];
    const sameSpan = Math.abs(top.x - bottom.x) <= 2 * lh && Math.abs(end(top) - end(bottom)) <= 2 * lh;
    const inside = bottom.y - (top.y + top.height);
    if (!sameSpan || inside > MAX_NOTE * lh || inside < lh) continue;
    const within = (b: Box): boolean =>
      b.y >= top.y + top.height && b.y + b.height <= bottom.y && b.x >= left - lh && end(b) <= right + lh;
    const framed = blocks.filter((b) => within(b.box));
    const text = framed.filter((b) => b.type === 'paragraph' || b.type === 'list_item' || b.type === 'heading');
    // A table between rules (booktabs) is a table; a note holds text, with perhaps its icon.
    if (!text.length || framed.some((b) => b.type === 'table')) continue;
    const first = Math.min(...framed.map((b) => b.box.y));
    const last = Math.max(...framed.map((b) => b.box.y + b.box.height));
    if (first - (top.y + top.height) > NEAR * lh || bottom.y - last > NEAR * lh) continue;
    for (const b of text) b.boxed = true;
  }
}
