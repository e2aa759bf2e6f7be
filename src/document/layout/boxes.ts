/**
 * Boxed notes: blocks set between two horizontal rules of about the same span, close above and below them (a
 * warning, a tip, a framed aside). They are marked `boxed`, and their markdown becomes a block quote: set apart as
 * the page sets them apart, not run into the text around them.
 */
import type { Box } from './ink.js';
import type { LayoutBlock } from './analyze.js';

/** Rules further apart than this many line heights frame a page or a section, not a note. */
const MAX_NOTE = 16;
/** A rule stands this close (in line heights) above or below what it frames. */
const NEAR = 2;

export function markBoxed(blocks: LayoutBlock[], hrules: readonly Box[], lh: number): void {
  const rules = [...hrules].sort((a, b) => a.y - b.y);
  for (let i = 0; i + 1 < rules.length; i++) {
    const [top, bottom] = [rules[i], rules[i + 1]];
    const sameSpan = Math.abs(top.x - bottom.x) <= 2 * lh && Math.abs(top.x + top.width - (bottom.x + bottom.width)) <= 2 * lh;
    const inside = bottom.y - (top.y + top.height);
    if (!sameSpan || inside > MAX_NOTE * lh || inside < lh) continue;
    const within = (b: Box): boolean => b.y >= top.y + top.height && b.y + b.height <= bottom.y && b.x >= Math.min(top.x, bottom.x) - lh && b.x + b.width <= Math.max(top.x + top.width, bottom.x + bottom.width) + lh;
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
