/**
 * Normalised edit distance on markdown with its syntax stripped and its math as typeset, as the page sets are scored.
 */
import { distance } from 'fastest-levenshtein';
import { normalise } from './cer.js';
import { renderMathMl } from './olmocr-math.js';

/**
 * Markdown to the words a reader sees: headings, quotes, fences, emphasis, list marks, table pipes and rules, HTML
 * table tags, comments gone.
 */
export function stripMarkdown(md: string): string {
  return (
    md
      // Backslash escapes first, as the character itself: the scorer then strips what it always stripped, so an
      // escaped `\_` in our markdown counts as a `_` in the truth does (both dropped as emphasis).
      .replace(/\\([!-/:-@[-`{-~])/g, '$1')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      // Block quotes' marks and code fences: the words quoted or fenced are what a reader sees.
      .replace(/^(?:\s{0,3}>\s?)+/gm, '')
      .replace(/^\s{0,3}(?:`{3,}|~{3,})[^\n]*$/gm, ' ')
      // An HTML table (cells that span): its tags, and the three entities its text is escaped with.
      .replace(/<\/?(?:table|thead|tbody|tr|th|td)\b[^>]*>/gi, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
      .replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm, ' ')
      .replace(/^\s{0,3}#{1,6}\s+/gm, '')
      .replace(/^\s*(?:[-*+]|\d{1,3}[.)])\s+/gm, '')
      .replace(/\|/g, ' ')
      .replace(/(\*\*|__|\*|_|`)/g, '')
  );
}

/**
 * A formula as a reader sees it typeset: the glyphs KaTeX draws for it, in order (the text of its MathML, as
 * olmocr-math.ts renders it), with the space a relation or an operator is set with; LaTeX that does not render, as it
 * is.
 */
function typeset(latex: string): string {
  const ml = renderMathMl(latex);
  if (ml === null) return latex;
  return ml
    .replace(/<mo([^>]*)>([^<]*)<\/mo>/g, (_, attrs: string, op: string) =>
      /lspace="0em"/.test(attrs) || /^[()[\]{}|,.;:!′]$/u.test(op) ? op : ` ${op} `,
    )
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * Our markdown's math (`$$` lines round a display formula, `$...$` within text; a `$` that is text is escaped,
 * `\$`, in a block with a formula) as it renders. Applied to what a system wrote, never to the truth, whose `$` are
 * prices.
 */
export function mathAsTypeset(md: string): string {
  return (
    md
      .replace(/^\$\$\n([\s\S]+?)\n\$\$$/gm, (_, latex: string) => typeset(latex))
      // Pandoc's rule, which GitHub's follows: no space inside either `$`, and no digit after the closing one (so
      // `$12.99 and $13`, left unescaped where a block has no formula, is text).
      .replace(/(?<!\\)\$(?=\S)([^$\n]*?\S)\$(?!\d)/g, (_, latex: string) => typeset(latex))
  );
}

/**
 * `hyp` against `ref`, each stripped of markdown syntax; formulas in `hyp` scored as the glyphs they render to, as
 * the truth's text layer holds them (a page's `x^{\beta}` is the `xβ` its PDF spells).
 */
export function ned(hyp: string, ref: string): number {
  const h = normalise(stripMarkdown(mathAsTypeset(hyp)));
  const r = normalise(stripMarkdown(ref));
  const n = Math.max(h.length, r.length);
  return n ? distance(h, r) / n : 0;
}
