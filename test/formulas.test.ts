/**
 * Display formulas: found on the page (limits and fraction parts kept on their formula's line), read as LaTeX by
 * the formula bundle where a line reads like mathematics, written as `$$` blocks (`$` in table cells), scored as
 * olmOCR-Bench scores math; a reading that does not close falls back to the text reading, flagged. Formulas set
 * within prose lines: found from the text reading, cut by its alignment, written as `$...$` in their paragraph.
 * test/fixtures/formula-page.png is made by `training/formula.py --page --out test/fixtures/formula-page.png`,
 * test/fixtures/inline-formula-page.png by `training/formula.py --inline-page --out ...`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assemblePage, type LineOut } from '../src/document/assemble.js';
import { decodeImage } from '../src/document/decode-image.js';
import { renderWordFormat } from '../src/document/formats/index.js';
import { formulaVerdict, latexRenders, looksLikeFormula } from '../src/document/formula.js';
import { formulaNumber } from '../src/document/formula-number.js';
import { inlineFormulaSpans, withInlineFormulas } from '../src/document/inline-formulas.js';
import { analyzeLayout, type PageLayout } from '../src/document/layout/analyze.js';
import { foldFormulaParts } from '../src/document/layout/lines.js';
import { tableMarkdown } from '../src/document/markdown.js';
import { Engine } from '../src/engine/engine.js';
import { scoreFormulas } from '../src/eval/formula-score.js';
import { normalLatex } from '../src/eval/latex-score.js';
import { mathAsTypeset, ned } from '../src/eval/ned.js';
import { checkFact } from '../src/eval/olmocr-facts.js';
import { equationsIn, mathFactHolds } from '../src/eval/olmocr-math.js';
import { DEFAULT_FORMULA_BUNDLE, FormulaReader } from '../src/worker/formula-reader.js';
import { readDocument } from '../src/worker/read-document.js';
import { ROOT } from './helpers/fixtures.js';

const NUMBERED_PAGE = join(ROOT, 'test', 'fixtures', 'numbered-formulas.png');
const FORMULA_PAGE = join(ROOT, 'test', 'fixtures', 'formula-page.png');
const INLINE_PAGE = join(ROOT, 'test', 'fixtures', 'inline-formula-page.png');
const truth = JSON.parse(readFileSync(FORMULA_PAGE.replace('.png', '.json'), 'utf8')) as {
  lines: { kind: string; latex?: string; text?: string; box: number[] }[];
};

describe('math facts as olmOCR-Bench scores them', () => {
  const fact = '\\int_{a}^{b} f(x) d x=F(b)-F(a)';
  it('passes the same formula spelled another way (spaces, braces)', () => {
    assert.ok(mathFactHolds(fact, 'text before\n\n$$\n\\int_{a}^{b}f(x)dx=F(b)-F(a)\n$$\n'));
    assert.ok(mathFactHolds('a^{2}+b^{2}=c^{2}', 'so $a^2 + b^2 = c^2$ holds'));
  });
  it('passes a formula found inside a longer one, and \\left( for (', () => {
    assert.ok(mathFactHolds('a^{2}+b^{2}=c^{2}', '$$x=a^{2}+b^{2}=c^{2}$$'));
    assert.ok(mathFactHolds('u \\in\\left(R / x\\right)', '$$u\\in(R/x)$$'));
  });
  it('fails another formula, the right formula as plain text, and LaTeX that does not render', () => {
    assert.ok(!mathFactHolds(fact, '$$\\int_{a}^{b}f(x)dx=F(a)-F(b)$$'));
    assert.ok(!mathFactHolds('a^{2}+b^{2}=c^{2}', 'a^{2}+b^{2}=c^{2}'), 'not between math delimiters');
    assert.ok(!mathFactHolds('a^{2}+b^{2}=c^{2}', '$$a^{2}+b^{2}=c^{2$$'));
    assert.ok(!mathFactHolds('\\mathbf{E}=0', '$$E=0$$'), 'bold is another symbol');
  });
  it("finds equations by the benchmark's delimiters, in its order", () => {
    assert.deepEqual(equationsIn('a \\(x\\) b \\[y\\] c $$z$$ d $w$'), ['x', 'y', 'z', 'w']);
  });
  it('scores math facts through checkFact', () => {
    assert.ok(
      checkFact({ pdf: 'p.pdf', page: 1, id: 'm', type: 'math', math: 'e^{i \\pi}+1=0' }, '$$\ne^{i\\pi}+1=0\n$$'),
    );
  });
});

describe('page NED with formulas in the markdown', () => {
  it("scores a formula as the glyphs it renders to, as a page's text layer spells it", () => {
    assert.equal(mathAsTypeset('with $F(x)=x^{\\beta}$ and $\\beta\\to\\infty$.'), 'with F(x) = xβ and β → ∞.');
    assert.equal(mathAsTypeset('above\n\n$$\n\\frac{a}{b}\n$$\n\nbelow'), 'above\n\nab\n\nbelow');
    assert.equal(ned('with $x^{2}$ here', 'with x2 here'), 0);
  });
  it('leaves prices, escaped dollars and LaTeX that does not render as text', () => {
    assert.equal(mathAsTypeset('costs $12.99 and $13 or \\$5'), 'costs $12.99 and $13 or \\$5');
    assert.equal(mathAsTypeset('a $\\notacommand{x}$ b'), 'a \\notacommand{x} b');
  });
});

describe('held-out formula crops, scored as normalised LaTeX', () => {
  it('normalises what changes no glyph: spaces, script braces, aliases, sizing', () => {
    assert.deepEqual(normalLatex('x^2 \\le \\left( y_i \\right)'), normalLatex('x^{2}\\leq(y_{i})'));
    assert.notDeepEqual(normalLatex('x^{2}'), normalLatex('x_{2}'));
  });
  it('counts exact matches, token edits and readings that render', async () => {
    const s = await scoreFormulas(['x^2+1', '\\frac{a}{b', 'y'], ['x^{2}+1', '\\frac{a}{b}', 'z']);
    assert.equal(s.exact, 1 / 3);
    assert.equal(s.renders, 2 / 3);
    assert.ok(s.tokenErrorRate > 0 && s.tokenErrorRate < 1);
  });
  it('counts spellings that typeset alike as the same reading', async () => {
    // \mathbf{ab} and \mathbf{a}\mathbf{b} are different tokens but the same glyphs.
    const s = await scoreFormulas(['\\mathbf{a}\\mathbf{b}', 'x^{2}'], ['\\mathbf{ab}', 'x_{2}']);
    assert.equal(s.exact, 0);
    assert.equal(s.typesetExact, 1 / 2);
  });
});

describe('which lines are formulas', () => {
  it('sends lines that read like mathematics to the formula reader, and prose not', () => {
    for (const t of ['eix + 1 = 0', 'V × E = -OB', 'a² + b? = c2', 'f(x) = ∑ x_i', 'λg = λg′'])
      assert.ok(looksLikeFormula(t), t);
    for (const t of [
      'Connects five fundamental constants (e, i, n, 1, 0), revealing',
      'Total 12.99',
      '-0.23',
      'Table 3: results = good and fine results here',
    ]) {
      assert.ok(!looksLikeFormula(t), t);
    }
    // A line that is a block of its own: a garbled formula still shows its brackets and operators.
    assert.ok(looksLikeFormula('{, roas - F0)~ Fen)', true));
    assert.ok(
      !looksLikeFormula('{, roas - F0)~ Fen)', false),
      "in a paragraph, or a cell of type's height, it needs a sign of mathematics",
    );
    assert.ok(!looksLikeFormula('3.1 Results of the (first) experiment', true));
  });
  it('finds formulas set within prose lines, and leaves names, units and code as prose', () => {
    const spans = (t: string): string[] => inlineFormulaSpans(t).map((s) => t.slice(s.start, s.end));
    assert.deepEqual(spans('Corollary 4.17. Suppose that g′ = ug for some u ∈ R×. Then λg = λg′.'), [
      'g′ = ug',
      'u ∈ R×',
      'λg = λg′',
    ]);
    assert.deepEqual(spans('The energy is E = mc? in the units of this chapter.'), ['E = mc?']);
    assert.deepEqual(spans('It follows that œ < ß whenever both are defined.'), ['œ < ß']);
    assert.deepEqual(spans('where x=y holds'), ['x=y']);
    for (const t of [
      'CURRENT USER = ALICE',
      'in the α-Gevrey case, the α-Bruno condition',
      'a film 5 μm thick of 2 m² area',
      'Table 3 lists = and the rest',
      'A line of prose with no mathematics set in it at all.',
    ]) {
      assert.deepEqual(spans(t), [], t);
    }
  });
  it(
    'takes LaTeX that renders, keeps text that is text, and falls back on ' +
      'LaTeX that does not close or ran to the cap',
    async () => {
      assert.equal(await formulaVerdict('e^{i\\pi}+1=0', false), 'latex');
      assert.equal(await formulaVerdict('Total 12.99', false), 'text');
      assert.equal(await formulaVerdict('\\frac{\\partial B}{\\partial t', false), 'fallback');
      assert.equal(await formulaVerdict('\\notacommand{x}', false), 'fallback');
      assert.equal(await formulaVerdict('x^{2}+y^{2}', true), 'fallback');
      // Unsure, or less sure than the text reader (a line of code with an `=`): the text reading stands.
      assert.equal(await formulaVerdict('a^{2}+b^{2}=c^{2}', false, 0.8, 0.5), 'text');
      assert.equal(await formulaVerdict("'EMP^{i}\\cdot=1", false, 0.92, 0.99), 'text');
      assert.equal(await formulaVerdict('a^{2}+b^{2}=c^{2}', false, 0.99, 0.7), 'latex');
      assert.ok(await latexRenders('\\sum_{i=1}^{n} x_{i}'));
    },
  );
});

describe('formula layout', () => {
  const lh = 28;
  const box = (
    x: number,
    y: number,
    width: number,
    height: number,
  ): { x: number; y: number; width: number; height: number } => ({ x, y, width, height });
  it("keeps a fraction's numerator and denominator and an integral's limits on their formula's line", () => {
    const numerator = box(620, 100, 50, 28);
    const main = box(420, 129, 260, 28);
    const denominator = box(630, 158, 36, 26);
    assert.deepEqual(foldFormulaParts([numerator, main, denominator], lh), [box(420, 100, 260, 84)]);
    const upper = box(431, 300, 9, 16);
    const integral = box(428, 320, 300, 60);
    const lower = box(432, 384, 10, 17);
    assert.equal(foldFormulaParts([upper, integral, lower], lh).length, 1);
  });
  it("leaves a paragraph's lines apart, its short last line included", () => {
    const lines = [box(80, 100, 1000, 28), box(80, 138, 1000, 28), box(80, 176, 420, 28)];
    assert.deepEqual(foldFormulaParts(lines, lh), lines);
    const tight = [box(80, 100, 1000, 28), box(80, 130, 300, 28)];
    assert.deepEqual(foldFormulaParts(tight, lh), tight, 'a short line right under another, starting where it starts');
  });
  it('finds each display formula of a page as one line, limits and fraction parts in it', async () => {
    const layout = analyzeLayout(await decodeImage(readFileSync(FORMULA_PAGE), FORMULA_PAGE));
    const lines = layout.blocks.flatMap((b) => b.lines);
    for (const t of truth.lines) {
      const [x0, y0, x1, y1] = t.box;
      const holding = lines.filter(
        (l) => l.band.x <= x1 && x0 <= l.band.x + l.band.width && l.band.y <= y1 && y0 <= l.band.y + l.band.height,
      );
      assert.equal(holding.length, 1, `${t.kind} at ${t.box.join(',')}: ${holding.length} lines`);
      if (t.kind === 'formula') {
        const b = holding[0].band;
        assert.ok(
          b.y <= y0 + 6 && b.y + b.height >= y1 - 6,
          `the formula's whole height is in its line (${JSON.stringify(b)} for ${t.box.join(',')})`,
        );
      }
    }
  });
});

describe("a display formula's number", () => {
  // A line crop 400 x 30 whose text reader read `E=mc2 (3)`: the formula's glyphs left, the number at the right.
  const crop = { width: 400, height: 30, data: new Uint8Array(400 * 30).fill(255) };
  const glyphsOf = (text: string, gapAt: number, gap: number) =>
    [...text].map((char, i) => {
      const x0 = 10 + 12 * i + (i >= gapAt ? gap : 0);
      return { char, x0, x1: x0 + 10, prob: 0.9 };
    });
  it('finds a number set apart at the end and cuts it off the crop the formula reader reads', () => {
    const text = 'E=mc2 (3)';
    const found = formulaNumber(text, glyphsOf(text, 6, 200), crop);
    assert.equal(found?.number, '3');
    // The cut lies in the gap: after the formula's last glyph (x1 = 70), before the bracket (x0 = 282).
    assert.ok(found && found.crop.width > 70 && found.crop.width < 282, String(found?.crop.width));
    assert.equal(formulaNumber('x=y (2.14a)', glyphsOf('x=y (2.14a)', 4, 150), crop)?.number, '2.14a');
  });
  it('leaves a bracket that belongs to the formula, and a line whose glyphs do not spell it', () => {
    assert.equal(formulaNumber('y=f(3)', glyphsOf('y=f(3)', 99, 0), crop), null);
    assert.equal(formulaNumber('(3)', glyphsOf('(3)', 0, 0), crop), null);
    assert.equal(formulaNumber('E=mc2 (3)', glyphsOf('E=mc2 (4)', 6, 200), crop), null);
  });
});

describe("formulas in the page's blocks and markdown", () => {
  const layout: PageLayout = {
    width: 1000,
    height: 600,
    lineHeight: 28,
    rules: [],
    blocks: [
      {
        type: 'paragraph',
        box: { x: 0, y: 0, width: 1000, height: 200 },
        lines: [0, 1, 2].map((i) => ({
          box: { x: 0, y: 60 * i, width: 900, height: 40 },
          band: { x: 0, y: 60 * i, width: 900, height: 40 },
        })),
      },
    ],
  };
  it(
    'makes a formula line its own formula block with its LaTeX between $$ ' + 'lines, the text around it paragraphs',
    () => {
      const lines: LineOut[] = [
        { box: layout.blocks[0].lines[0].box, text: 'The relation is', confidence: 0.9 },
        {
          box: layout.blocks[0].lines[1].box,
          text: '\\nabla\\times\\mathbf{E}=-\\frac{\\partial\\mathbf{B}}{\\partial t}',
          confidence: 0.8,
          formula: 'latex',
        },
        { box: layout.blocks[0].lines[2].box, text: 'for every field.', confidence: 0.9 },
      ];
      const page = assemblePage(0, layout, [lines]);
      assert.deepEqual(
        page.blocks.map((b) => b.type),
        ['paragraph', 'formula', 'paragraph'],
      );
      assert.equal(page.blocks[1].latex, lines[1].text);
      assert.match(
        page.markdown,
        /\n\$\$\n\\nabla\\times\\mathbf\{E\}=-\\frac\{\\partial\\mathbf\{B\}\}\{\\partial t\}\n\$\$\n/,
      );
      assert.ok(
        mathFactHolds('\\nabla \\times \\mathbf{E}=-\\frac{\\partial \\mathbf{B}}{\\partial t}', page.markdown),
      );
    },
  );
  it("keeps a formula's number apart from its LaTeX: the block's number, \\tag in the markdown", () => {
    const lines: LineOut[] = [
      { box: layout.blocks[0].lines[1].box, text: 'E=mc^{2}', confidence: 0.9, formula: 'latex', number: '3' },
    ];
    const page = assemblePage(0, layout, [lines]);
    assert.equal(page.blocks[0].latex, 'E=mc^{2}');
    assert.equal(page.blocks[0].number, '3');
    assert.match(page.markdown, /\$\$\nE=mc\^\{2\}\\tag\{3\}\n\$\$/);
    assert.ok(mathFactHolds('E=mc^{2}', page.markdown));
  });
  it(
    'writes a formula read within a line as inline math in its paragraph, ' + 'with its box, and its words one word',
    () => {
      const box = layout.blocks[0].lines[0].box;
      const line: LineOut = {
        box,
        text: 'Suppose that g’ = ug for some unit.',
        confidence: 0.9,
        words: ['Suppose', 'that', 'g’', '=', 'ug', 'for', 'some', 'unit.'].map((w, i) => ({
          text: w,
          box: { x: 100 * i, y: 0, width: 80, height: 30 },
          confidence: 0.9,
        })),
      };
      const f = {
        line: 0,
        span: { start: 13, end: 20 },
        first: 2,
        last: 4,
        crop: { width: 1, height: 1, data: new Uint8Array(1) },
        box: { x: 200, y: 0, width: 280, height: 30 },
        textConfidence: 0.8,
      };
      const out = withInlineFormulas(line, [{ ...f, latex: 'g^{\\prime}=ug', confidence: 0.99 }]);
      assert.equal(out.text, 'Suppose that $g^{\\prime}=ug$ for some unit.');
      assert.deepEqual(
        out.inline?.map((i) => out.text.slice(i.start, i.end)),
        ['$g^{\\prime}=ug$'],
      );
      assert.deepEqual(
        out.words?.map((w) => w.text),
        ['Suppose', 'that', 'g^{\\prime}=ug', 'for', 'some', 'unit.'],
      );
      assert.deepEqual(out.words?.[2].box, f.box);
      const page = assemblePage(
        0,
        { ...layout, blocks: [{ ...layout.blocks[0], lines: layout.blocks[0].lines.slice(0, 1) }] },
        [[out]],
      );
      assert.deepEqual(
        page.blocks.map((b) => b.type),
        ['paragraph'],
      );
      assert.equal(page.markdown, 'Suppose that $g^{\\prime}=ug$ for some unit.');
      assert.ok(mathFactHolds('g^{\\prime}=u g', page.markdown));
    },
  );
  it('keeps a formula that fell back as text in its paragraph, flagged, with the markdown unbroken', () => {
    const lines: LineOut[] = [
      { box: layout.blocks[0].lines[0].box, text: 'V × E = -OB', confidence: 0.2, formula: 'fallback' },
    ];
    const page = assemblePage(
      0,
      { ...layout, blocks: [{ ...layout.blocks[0], lines: layout.blocks[0].lines.slice(0, 1) }] },
      [lines],
    );
    assert.deepEqual(
      page.blocks.map((b) => b.type),
      ['paragraph'],
    );
    assert.equal(page.markdown, 'V × E = -OB');
    assert.equal(page.blocks[0].lines[0].formula, 'fallback');
  });
  it(
    'writes a formula in a table cell as inline math, and leaves a page ' + 'without formulas as it was ($ unescaped)',
    () => {
      const md = tableMarkdown([
        ['Law', 'Form'],
        ['Euler', '\uE000e^{i\\pi}+1=0\uE001'],
      ]);
      assert.match(md, /\| Euler \| \$e\^\{i\\pi\}\+1=0\$ \|/);
      assert.ok(mathFactHolds('e^{i \\pi}+1=0', md));
      assert.match(
        tableMarkdown([
          ['Item', 'Price'],
          ['Tea', '$12.99'],
        ]),
        /\| Tea {2}\| \$12\.99 \|/,
      );
    },
  );
});

describe(
  "the formula bundle reads the page's formulas",
  { skip: !existsSync(join(DEFAULT_FORMULA_BUNDLE, 'config.json')) && 'no formula bundle in this install' },
  () => {
    let engine: Engine;
    let formulas: FormulaReader;
    before(async () => {
      engine = await Engine.open();
      formulas = new FormulaReader();
    });
    after(async () => {
      await engine.close();
      await formulas.close();
    });
    it('reads the display formulas as formula blocks whose LaTeX renders, and the text as text', async () => {
      const doc = await readDocument(engine, readFileSync(FORMULA_PAGE), 'formula-page.png', { formulas });
      const blocks = doc.pages[0].blocks;
      const formulaBlocks = blocks.filter((b) => b.type === 'formula');
      assert.ok(
        formulaBlocks.length >= 1,
        `formula blocks: ${blocks.map((b) => `${b.type}: ${b.markdown}`).join(' | ')}`,
      );
      for (const b of formulaBlocks) assert.ok(b.latex && (await latexRenders(b.latex)), `renders: ${b.latex}`);
      // The plainest of the three (scripts only) is read exactly; the fraction and the stacked limits may not be.
      const plain = truth.lines.find((t) => t.kind === 'formula')?.latex ?? '';
      assert.ok(
        formulaBlocks.some((b) => normalLatex(b.latex ?? '').join(' ') === normalLatex(plain).join(' ')),
        `${plain} among ${formulaBlocks.map((b) => b.latex).join(' | ')}`,
      );
      // Every formula line is either LaTeX that renders or the text reading, flagged: never LaTeX that breaks.
      for (const l of blocks.flatMap((b) => b.lines))
        if (l.formula === 'fallback') assert.ok(l.confidence !== undefined && l.confidence <= 0.2);
      assert.match(doc.markdown, /The flux through a closed surface/);
      assert.ok(
        !blocks.some((b) => b.type === 'formula' && /flux|interval|chapter/.test(b.latex ?? '')),
        'prose is never a formula',
      );
    });
    it("keeps a display formula's number apart from its LaTeX, as the block's number", async () => {
      // numbered-formulas.tex, typeset by pdflatex and rendered by pdftoppm at 150 dpi: two numbered equations.
      const doc = await readDocument(engine, readFileSync(NUMBERED_PAGE), 'numbered-formulas.png', { formulas });
      const blocks = doc.pages[0].blocks;
      const numbered = blocks.filter((b) => b.type === 'formula').map((b) => [b.number, b.latex]);
      assert.deepEqual(
        numbered.map(([n]) => n),
        ['1', '3'],
        JSON.stringify(numbered),
      );
      assert.ok(
        numbered.every(([, latex]) => !/\(\d\)/.test(latex ?? '')),
        'no number in the LaTeX',
      );
      assert.ok(
        !blocks.some((b) => b.type !== 'formula' && /^\(\d\)$/.test(b.markdown.trim())),
        'no block of a number',
      );
      assert.match(doc.markdown, /\\tag\{1\}\n\$\$/);
    });
    it('gives a formula one word box, so hOCR and ALTO hold it whole', async () => {
      const bytes = readFileSync(FORMULA_PAGE);
      const doc = await readDocument(engine, bytes, 'formula-page.png', { formulas, words: true });
      const formulaLines = doc.pages[0].blocks.flatMap((b) => b.lines).filter((l) => l.formula === 'latex');
      for (const l of formulaLines)
        assert.deepEqual(
          l.words?.map((w) => w.text),
          [l.text],
        );
      for (const format of ['hocr', 'alto'] as const) {
        const out = await renderWordFormat(format, {
          bytes,
          fileName: 'formula-page.png',
          format: doc.format,
          pages: doc.pages,
          pdfDpi: 200,
          software: { name: 'specula', version: 'test' },
        });
        assert.ok(out.length > 0);
      }
    });

    it(
      "reads a formula set in a prose line as inline math, and the line's " + 'prose and a line without one as read',
      async () => {
        const inlineTruth = JSON.parse(readFileSync(INLINE_PAGE.replace('.png', '.json'), 'utf8')) as {
          lines: { before?: string; latex?: string; after?: string; text?: string }[];
        };
        const doc = await readDocument(engine, readFileSync(INLINE_PAGE), 'inline-formula-page.png', {
          formulas,
          words: true,
        });
        const lines = doc.pages[0].blocks.flatMap((b) => b.lines);
        assert.equal(lines.length, inlineTruth.lines.length, lines.map((l) => l.text).join(' | '));
        assert.ok(!lines.some((l) => l.formula), 'no line is a display formula');
        const withMath = lines.filter((l) => l.inline?.length);
        assert.ok(withMath.length >= 2, `inline formulas: ${lines.map((l) => l.text).join(' | ')}`);
        for (const l of withMath) {
          for (const f of l.inline ?? []) {
            assert.ok(await latexRenders(f.latex), f.latex);
            assert.equal(l.text.slice(f.start, f.end), `$${f.latex}$`);
            // Its box lies within its line's, right of the prose before it.
            assert.ok(
              f.box.x > l.box.x + 100 && f.box.x + f.box.width <= l.box.x + l.box.width + 2,
              JSON.stringify([f.box, l.box]),
            );
            assert.ok(l.words?.some((w) => w.text === f.latex));
          }
        }
        // The plainest is read exactly, and the prose round it stays prose.
        const exact = inlineTruth.lines.filter(
          (t) =>
            t.latex &&
            withMath.some((l) =>
              l.inline?.some((f) => normalLatex(f.latex).join(' ') === normalLatex(t.latex ?? '').join(' ')),
            ),
        );
        assert.ok(exact.length >= 1, `exact: ${withMath.map((l) => l.text).join(' | ')}`);
        assert.match(doc.markdown, /Suppose that \$[^$\n]+\$ for some unit u of the ring\./);
        assert.equal(lines[lines.length - 1].inline, undefined);
        assert.equal(lines[lines.length - 1].text, inlineTruth.lines[inlineTruth.lines.length - 1].text);
      },
    );

    it('reads nothing as a formula when asked not to', async () => {
      const doc = await readDocument(engine, readFileSync(FORMULA_PAGE), 'formula-page.png', { formulas: null });
      assert.ok(!doc.pages[0].blocks.some((b) => b.type === 'formula'));
      assert.ok(!doc.markdown.includes('$$'));
      const prose = await readDocument(engine, readFileSync(INLINE_PAGE), 'inline-formula-page.png', {
        formulas: null,
      });
      assert.ok(!prose.pages[0].blocks.some((b) => b.lines.some((l) => l.inline)));
    });
  },
);
