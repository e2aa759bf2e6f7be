/**
 * olmOCR-Bench's math facts, scored as its MathTest scores them (olmocr/bench/tests.py at the commit the sample
 * names): the equations of the markdown are found by its delimiters (`\(..\)`, `\[..\]`, `$$..$$`, `$..$`, each
 * taken out before the next is looked for); one equal to the fact's LaTeX passes; else both are rendered by KaTeX
 * (0.16, as its vendored copy) and the fact holds when the reference's MathML, whitespace removed, is contained in
 * the hypothesis's. Its last resort, a comparison of the rendered glyphs' positions in a browser (every glyph of the
 * reference found in the hypothesis with the same neighbours above, below, left and right), is not run here; in
 * its place the MathML drops the presentation hints (`fence`, `stretchy`, `separator`) that change no glyph of an
 * expression that is not tall (`(x)` and `\left(x\right)`), and rows (`<mrow>`, grouping without a glyph of its
 * own: `\left(` wraps its content in one, and the whole formula is one) are unwrapped, so that a formula inside a
 * longer one (`x=a^{2}+b^{2}`) is found, as that comparison finds it. Scripts, fractions and roots keep their
 * structure (`<msup>`, `<mfrac>`, ...).
 */
import katex from 'katex';

/** The equations of a markdown text, by olmOCR-Bench's delimiters and in its order. */
export function equationsIn(markdown: string): string[] {
  const patterns = [/\\\((.+?)\\\)/gs, /\\\[(.+?)\\\]/gs, /\$\$(.+?)\$\$/gs, /\$(.+?)\$/gs];
  const out: string[] = [];
  let rest = markdown;
  for (const p of patterns) {
    for (const m of rest.matchAll(p)) out.push(m[1].trim());
    rest = rest.replace(p, '');
  }
  return out;
}

/**
 * KaTeX's MathML for `latex` (display mode), the `<semantics>` content without its annotation; null if it does not
 * render.
 */
export function renderMathMl(latex: string): string | null {
  let html: string;
  try {
    html = katex.renderToString(latex, { output: 'mathml', displayMode: true, throwOnError: true, strict: false });
  } catch {
    return null;
  }
  return /<semantics>([\s\S]*)<annotation[\s\S]*<\/semantics>/.exec(html)?.[1] ?? html;
}

/** renderMathMl's MathML normalised as the fact comparison wants it; null if it does not render. */
export function mathMl(latex: string): string | null {
  const inner = renderMathMl(latex);
  if (inner === null) return null;
  return inner
    .replace(/\s(?:fence|stretchy|separator)="[^"]*"/g, '')
    .replace(/<\/?mrow>/g, '')
    .replace(/[\s\u200a-\u200d\u2060\ufeff]+/g, '');
}

/**
 * Whether the markdown holds the fact's formula, as olmOCR-Bench's MathTest decides it (without its browser fallback).
 */
export function mathFactHolds(math: string, markdown: string): boolean {
  const equations = equationsIn(markdown);
  if (equations.includes(math)) return true;
  const reference = mathMl(math);
  if (reference === null) return false; // the benchmark refuses such a fact outright
  return equations.some((e) => {
    const hyp = mathMl(e);
    return hyp !== null && hyp.includes(reference);
  });
}
