/** Normalised edit distance on markdown with its syntax stripped, as the page sets are scored. */
import { distance } from 'fastest-levenshtein';
import { normalise } from './cer.js';

/** Markdown to the words a reader sees: headings, emphasis, list marks, table pipes and rules, HTML table tags, comments gone. */
export function stripMarkdown(md: string): string {
  return md
    // Backslash escapes first, as the character itself: the scorer then strips what it always stripped, so an
    // escaped `\_` in our markdown counts as a `_` in the truth does (both dropped as emphasis).
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    // An HTML table (cells that span): its tags, and the three entities its text is escaped with.
    .replace(/<\/?(?:table|thead|tbody|tr|th|td)\b[^>]*>/gi, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm, ' ')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*(?:[-*+]|\d{1,3}[.)])\s+/gm, '')
    .replace(/\|/g, ' ')
    .replace(/(\*\*|__|\*|_|`)/g, '');
}

export function ned(hyp: string, ref: string): number {
  const h = normalise(stripMarkdown(hyp));
  const r = normalise(stripMarkdown(ref));
  const n = Math.max(h.length, r.length);
  return n ? distance(h, r) / n : 0;
}
