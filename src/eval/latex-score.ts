/**
 * LaTeX compared as im2latex-style evaluations compare it: split into tokens (a control word, an escaped
 * character, one character), with what changes no glyph taken out or spelled one way: spaces and spacing
 * commands, `\left`/`\right` (sizing), braces around a single-token script (`x^2` is `x^{2}`), and the
 * commands that are another's alias (`\le` is `\leq`, `\dfrac` is `\frac`).
 */

const ALIASES: Record<string, string> = {
  '\\le': '\\leq',
  '\\ge': '\\geq',
  '\\ne': '\\neq',
  '\\rightarrow': '\\to',
  '\\dfrac': '\\frac',
  '\\tfrac': '\\frac',
  '\\lbrace': '\\{',
  '\\rbrace': '\\}',
  '\\vert': '|',
  '\\lvert': '|',
  '\\rvert': '|',
  '\\bm': '\\mathbf',
  '\\boldsymbol': '\\mathbf',
  '\\dots': '\\ldots',
};

const SPACING = new Set([
  '\\,',
  '\\;',
  '\\:',
  '\\!',
  '\\ ',
  '\\quad',
  '\\qquad',
  '~',
  '\\left',
  '\\right',
  '\\displaystyle',
  '\\limits',
]);

/** LaTeX tokens: control words, escaped characters and single characters, whitespace dropped. */
export function latexTokens(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '\\') {
      let j = i + 1;
      while (j < s.length && /[A-Za-z]/.test(s[j])) j++;
      if (j === i + 1) j = Math.min(s.length, i + 2); // an escaped character: \{ \, \\
      out.push(s.slice(i, j));
      i = j;
    } else {
      out.push(c);
      i++;
    }
  }
  return out;
}

/** The tokens of `s` in one spelling (see the module's comment). */
export function normalLatex(s: string): string[] {
  const t = latexTokens(s)
    .map((x) => ALIASES[x] ?? x)
    .filter((x) => !SPACING.has(x));
  const out: string[] = [];
  for (let i = 0; i < t.length; i++) {
    out.push(t[i]);
    // A script's one-token argument gets its braces: x^2 -> x^{2}.
    if ((t[i] === '^' || t[i] === '_') && i + 1 < t.length && t[i + 1] !== '{') {
      out.push('{', t[i + 1], '}');
      i++;
    }
  }
  return out;
}

/** Edit distance between two token sequences. */
export function tokenDistance(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}
