import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Root, RootContent } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { toString } from 'mdast-util-to-string';
import { gfmTable } from 'micromark-extension-gfm-table';
import {
  headingMarkdown,
  listItemMarkdown,
  PAGE_BREAK,
  paragraphMarkdown,
  tableMarkdown,
} from '../src/document/markdown.js';
import { Engine } from '../src/engine/engine.js';
import { readDocument } from '../src/worker/read-document.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';

/** What a CommonMark + GFM renderer makes of the markdown. */
const parse = (md: string): Root =>
  fromMarkdown(md, { extensions: [gfmTable()], mdastExtensions: [gfmTableFromMarkdown()] });

/** Every node type in the tree. */
function types(node: Root | RootContent, out = new Set<string>()): Set<string> {
  out.add(node.type);
  if ('children' in node) for (const c of node.children) types(c, out);
  return out;
}

const HOSTILE = [
  'linux-kernel <Flav> Win 98 Psychic edition',
  'of an SGI <pp> And intel prices',
  'Larry Wall in <8225@jpl-devvax.JPL.NASA.GOV>',
  '*** 30/03/2018 11:11 PM ***',
  '---',
  '# 1 in sales',
  '1. not a list, a sentence',
  '- a dash',
  '+ a plus',
  '> not a quote',
  'a_b_c and 2*3*4 and __init__',
  'pipes | in | text',
  '[not](a link) and ![not](an image)',
  '`not code`',
  'back\\slash and &amp; an entity',
  '<script>alert(1)</script>',
  '    four spaces are not code',
  '=====',
];

describe('markdown output', () => {
  it(
    'the text read renders as itself: raw HTML, autolinks, emphasis, ' + 'headings, lists, rules and code all escaped',
    () => {
      for (const text of HOSTILE) {
        const tree = parse(paragraphMarkdown(text));
        assert.deepEqual(
          [...types(tree)].sort(),
          ['paragraph', 'root', 'text'],
          `${JSON.stringify(text)} -> ${JSON.stringify(paragraphMarkdown(text))}`,
        );
        assert.equal(toString(tree), text, JSON.stringify(text));
      }
    },
  );

  it('headings, list items and table cells keep their text exactly, and stay what they are', () => {
    const h = parse(headingMarkdown('Return *Self* <Flav>', 2));
    assert.equal(h.children[0].type, 'heading');
    assert.equal(toString(h), 'Return *Self* <Flav>');
    const li = parse(listItemMarkdown('Apples <b>and</b> pears', 3));
    assert.equal(li.children[0].type, 'list');
    assert.equal(toString(li), 'Apples <b>and</b> pears');
    const cells = [
      ['Item', 'a|b'],
      ['<x>', '*5*'],
    ];
    const t = parse(tableMarkdown(cells));
    assert.equal(t.children[0].type, 'table');
    const rows = (t.children[0] as { children: { children: unknown[] }[] }).children.map((r) =>
      r.children.map((c) => toString(c as RootContent)),
    );
    assert.deepEqual(rows, cells);
  });

  describe('a real page', () => {
    let engine: Engine;
    before(async () => {
      engine = await Engine.open();
    });
    after(() => engine.close());

    it(
      "the sample page's own <Flav>, <pp> and <8225@...> come out as text, " + 'every block as its lines read',
      async () => {
        const doc = await readDocument(engine, readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
        const tree = parse(doc.markdown);
        const kinds = types(tree);
        assert.ok(!kinds.has('html') && !kinds.has('link'), `no raw HTML or links: ${[...kinds].join(', ')}`);
        const shown = toString(tree, { includeHtml: false });
        for (const b of doc.pages[0].blocks) {
          // A list item's own marker ("* ", "1.") becomes the list's; everything else is text.
          const words = b.lines.flatMap((l) => l.text.split(/\s+/)).slice(b.type === 'list_item' ? 1 : 0);
          for (const word of words.filter((w) => /[<>*_#|`[\]]/.test(w)))
            assert.ok(shown.includes(word.replace(/-$/, '')), `"${word}" shows as read`);
        }
        // The model reads these brackets on the sample page; where it does, they must render.
        const read = doc.pages[0].blocks.flatMap((b) => b.lines.map((l) => l.text)).join(' ');
        for (const s of ['<Flav>', '<pp>']) if (read.includes(s)) assert.ok(shown.includes(s), s);
      },
    );

    it('pages of a multi-page document are separated by a thematic break a renderer keeps', async () => {
      const png = readFileSync(SAMPLE_PAGE);
      const doc = await readDocument(engine, await pdfOfImages([png, png]), 'two.pdf');
      assert.equal(doc.pageCount, 2);
      assert.equal(doc.markdown, doc.pages.map((p) => p.markdown).join(PAGE_BREAK));
      const breaks = parse(doc.markdown).children.filter((c) => c.type === 'thematicBreak');
      assert.equal(breaks.length, 1, 'one break, between the two pages');
    });
  });
});
