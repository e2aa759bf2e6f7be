/**
 * Tables once read: how they are written (GFM, or HTML where cells span), and how olmOCR-Bench's table facts read
 * them back (src/eval/olmocr-tables.ts), so that the eval scores the markdown as that benchmark would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { foldCurrencyColumns, tableToMarkdown } from '../src/document/table-text.js';
import { checkFact, type Fact } from '../src/eval/olmocr-facts.js';
import { headingsFrom, htmlTables, markdownTables } from '../src/eval/olmocr-tables.js';

const statement = {
  cells: [
    ['', 'Year Ended', '', '', '', '', ''],
    ['', 'Jan 26, 2025', '', 'Jan 28, 2024', '', 'Jan 29, 2023', ''],
    ['Cost of revenue', '$', '178', '$', '141', '$', '138'],
    ['Research & development', '', '3,423', '', '2,532', '', '1,892'],
  ],
  spans: [
    { row: 0, col: 1, rowSpan: 1, colSpan: 6 },
    { row: 1, col: 1, rowSpan: 1, colSpan: 2 },
    { row: 1, col: 3, rowSpan: 1, colSpan: 2 },
    { row: 1, col: 5, rowSpan: 1, colSpan: 2 },
  ],
  headerRows: 2,
};

const fact = (f: Partial<Fact>): Fact => ({ pdf: 'x.pdf', page: 1, id: 't', type: 'table', ...f });

describe('a read table, written out', () => {
  it('folds a column of currency signs into the figures beside it, spans and all', () => {
    const t = foldCurrencyColumns(statement);
    assert.deepEqual(t.cells, [
      ['', 'Year Ended', '', ''],
      ['', 'Jan 26, 2025', 'Jan 28, 2024', 'Jan 29, 2023'],
      ['Cost of revenue', '$178', '$141', '$138'],
      ['Research & development', '3,423', '2,532', '1,892'],
    ]);
    assert.deepEqual(t.spans, [{ row: 0, col: 1, rowSpan: 1, colSpan: 3 }], 'the dates now head one column each');
  });

  it(
    'is HTML where cells span or header rows stack (escaped, spans as ' +
      'colspan, header rows in thead), GFM otherwise',
    () => {
      const html = tableToMarkdown(foldCurrencyColumns(statement));
      assert.equal(html.split('\n')[0], '<table>');
      assert.match(
        html,
        /<thead>\n<tr><th><\/th><th colspan="3">Year Ended<\/th><\/tr>\n<tr><th><\/th><th>Jan 26, 2025<\/th>/,
      );
      assert.match(html, /<td>Research &amp; development<\/td>/);
      assert.equal(
        html.split('\n').filter((l) => l.startsWith('<tr>')).length,
        4,
        'a spanned position gets no cell of its own',
      );
      const plain = tableToMarkdown({
        cells: [
          ['Item', 'Price'],
          ['Tea', '$3'],
        ],
        spans: [],
        headerRows: 1,
      });
      assert.match(plain, /^\| Item \| Price \|\n\| -+ \| -+ \|\n\| Tea +\| \$3 +\|$/);
    },
  );
});

describe('tables as olmOCR-Bench reads them', () => {
  const html = tableToMarkdown(foldCurrencyColumns(statement));

  it(
    'an HTML table: neighbours across the grid, headings from th and ' + 'thead, a span heading every column under it',
    () => {
      const [t] = htmlTables(`Some text\n\n${html}\n\nMore text`);
      assert.equal(t.text.get('2,1'), '$178');
      assert.deepEqual(
        [...(t.up.get('3,2') ?? [])].map((c) => t.text.get(c)),
        ['$141'],
      );
      assert.deepEqual(
        [...(t.left.get('3,1') ?? [])].map((c) => t.text.get(c)),
        ['Research & development'],
      );
      const heads = [...headingsFrom(t, '3,3', t.up)].map((c) => t.text.get(c)).sort();
      assert.deepEqual(heads, ['Jan 29, 2023', 'Year Ended']);
      assert.ok(checkFact(fact({ cell: '1,892', top_heading: 'Year Ended' }), html));
      assert.ok(checkFact(fact({ cell: '2,532', left_heading: 'Research & development' }), html));
      assert.ok(checkFact(fact({ cell: '$141', up: 'Jan 28, 2024', right: '$138' }), html));
      assert.ok(!checkFact(fact({ cell: '$141', right: '$178' }), html));
    },
  );

  it('a GFM table: the first row and the first column are its headings', () => {
    const md = '| Source | Tokens |\n| --- | --- |\n| arXiv | 20.8B |\n| Wiki | 3.7B |';
    const [t] = markdownTables(md);
    assert.ok(t.headings.has('0,1') && t.headings.has('2,0') && !t.headings.has('1,1'));
    assert.ok(checkFact(fact({ cell: '3.7B', top_heading: 'Tokens', left_heading: 'Wiki', up: '20.8B' }), md));
    assert.ok(!checkFact(fact({ cell: '3.7B', top_heading: 'Source' }), md));
    assert.ok(checkFact(fact({ cell: '3.7', max_diffs: 1 }), md), 'a cell one edit away, with one allowed');
  });
});
