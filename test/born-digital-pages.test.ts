/**
 * Born-digital pages as they show themselves: a boxed warning with its icon read as a note, code listings fenced, a
 * ruled table's cells of several lines kept whole, and the PDF's own text layer taken as evidence where the model's
 * eyes agree with it, never where it lies. The fixture is two pages of the Debian Reference (test/fixtures/NOTICE).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Engine } from '../src/engine/engine.js';
import { readDocument } from '../src/worker/read-document.js';
import { ROOT } from './helpers/fixtures.js';
import { pdfOfImageWithLayer } from './helpers/pdfs.js';

const DEBIAN = readFileSync(join(ROOT, 'test', 'fixtures', 'debian-reference.pdf'));
const ARTICLE = readFileSync(join(ROOT, 'test', 'fixtures', 'article.png'));

let engine: Engine;
before(async () => {
  engine = await Engine.open();
});
after(() => engine.close());

describe('a born-digital page with boxed notes, code and a ruled table', () => {
  it(
    'reads a warning box beside its icon as a note (a block quote), the ' +
      'icon a figure, and no line of it unreadable',
    async () => {
      const doc = await readDocument(engine, DEBIAN, 'debian-reference.pdf', { pages: '1' });
      const page = doc.pages[0];
      assert.equal(page.unreadableLines, 0);
      const notes = page.blocks.filter((b) => b.boxed);
      assert.equal(notes.length, 3, 'two warnings and a caution');
      const warning =
        'Use of apt-pinning by a novice user is sure call for major troubles. ' +
        'You must avoid using apt-pinning except when you absolutely need it.';
      for (const n of notes.slice(0, 2)) assert.ok(n.markdown.includes(warning), n.markdown);
      assert.match(notes[2].markdown, /^Caution Downgrading is not officially supported by the Debian by design\./);
      assert.match(page.markdown, /^> Warning Use of apt-pinning/m);
      assert.match(page.markdown, /^> Caution Downgrading/m);
      // Each note's icon stands before it as a figure, not as a line read into garbage.
      for (const n of notes) assert.equal(page.blocks[n.order - 1].type, 'figure');
    },
  );

  it('fences a code listing line by line, and keeps its lines apart from the prose around it', async () => {
    const doc = await readDocument(engine, DEBIAN, 'debian-reference.pdf', { pages: '1' });
    const code = doc.pages[0].blocks.filter((b) => b.type === 'code');
    assert.equal(code.length, 3);
    assert.equal(code[0].lines.length, 3);
    const listing = ['Update-Package-Lists', 'Download-Upgradeable-Packages', 'Unattended-Upgrade'];
    // The quotes as the PDF's font draws them: any character.
    const fenced = ['```', ...listing.map((k) => `APT::Periodic::${k} .1.;`), '```'].join('\n');
    assert.match(code[0].markdown, new RegExp(`^${fenced}$`));
    assert.match(code[2].markdown, /APT::Acquire::http::Dl-Limit .800.;/);
    assert.ok(!doc.pages[0].blocks.some((b) => b.type === 'paragraph' && /APT::Periodic/.test(b.markdown)));
  });

  it("keeps a ruled table's cell of several lines as one cell of one row", async () => {
    const doc = await readDocument(engine, DEBIAN, 'debian-reference.pdf', { pages: '0' });
    const table = doc.pages[0].blocks.find((b) => b.type === 'table');
    assert.ok(table?.cells);
    const row = table.cells.find((r) => r[0] === 'apt install foo');
    assert.ok(row, 'the row of "apt install foo"');
    assert.equal(row[1], 'aptitude install foo');
    assert.ok(
      !table.cells.some((r) => r[1] === 'install' || r[1] === 'foo'),
      "no row of a cell's second or third line alone",
    );
  });

  it("gives each cell of a table that holds text the box of its lines, within the table's", async () => {
    const doc = await readDocument(engine, DEBIAN, 'debian-reference.pdf', { pages: '0' });
    const table = doc.pages[0].blocks.find((b) => b.type === 'table');
    const boxes = table?.table?.cellBoxes;
    assert.ok(table?.cells && boxes);
    assert.deepEqual(
      boxes.map((row) => row.map((b) => b !== null)),
      table.cells.map((row) => row.map((text) => text !== '')),
    );
    // (Within a few pixels: a line's ink may stand over the table's top rule.)
    const within = (b: { x: number; y: number; width: number; height: number }): boolean =>
      b.x >= table.box.x - 4 &&
      b.y >= table.box.y - 4 &&
      b.x + b.width <= table.box.x + table.box.width + 4 &&
      b.y + b.height <= table.box.y + table.box.height + 4;
    assert.ok(boxes.flat().every((b) => b === null || within(b)));
    // The cell of "apt install foo" lies left of the one of "aptitude install foo" (three lines), rows overlapping.
    const r = table.cells.findIndex((row) => row[0] === 'apt install foo');
    const [a, b] = [boxes[r][0], boxes[r][1]];
    assert.ok(a && b && a.x + a.width <= b.x && a.y < b.y + b.height && b.y < a.y + a.height);
    assert.ok(b.height > 2 * a.height, 'the three-line cell is taller');
  });

  it(
    "takes the text layer where the model's CTC head finds it fits the " +
      'line as well as its own reading, and says so',
    async () => {
      const doc = await readDocument(engine, DEBIAN, 'debian-reference.pdf', { pages: '1' });
      const lines = doc.pages[0].blocks.flatMap((b) => b.lines);
      const apt = lines.find((l) => l.text.startsWith('These can be customized'));
      assert.ok(apt?.text.includes('”/etc/apt/apt.conf.d/02backup”'), apt?.text);
      assert.ok(lines.some((l) => l.textLayer));
      const alone = await readDocument(engine, DEBIAN, 'debian-reference.pdf', { pages: '1', textLayer: false });
      assert.ok(!alone.pages[0].blocks.some((b) => b.lines.some((l) => l.textLayer)));
    },
  );
});

describe('a scan whose invisible text layer lies', () => {
  it(
    "keeps the model's reading of a line whose layer says words that are " +
      'not there, though the rest of the layer agrees',
    async () => {
      // The layer: what the model reads on the scan itself, one word of one line swapped for another of its length.
      const scan = await readDocument(engine, ARTICLE, 'article.png');
      const lines = scan.pages[0].blocks.flatMap((b) => b.lines).filter((l) => l.text.split(' ').length >= 6);
      assert.ok(lines.length >= 6);
      const victim = lines[3];
      const words = victim.text.split(' ');
      const at = words.findIndex((w) => /^[a-z]{4,}$/.test(w));
      const lie = [...words];
      lie[at] = 'x'.repeat(words[at].length);
      const pdf = pdfOfImageWithLayer(
        ARTICLE,
        lines.map((l) => ({ text: l === victim ? lie.join(' ') : l.text, box: l.box })),
      );
      const read = await readDocument(engine, pdf, 'article.pdf');
      const all = read.pages[0].blocks.flatMap((b) => b.lines);
      assert.ok(!read.text.includes(lie[at]), 'the lie is not read');
      const same = all.find(
        (l) => l.text.includes(words.slice(0, at).join(' ')) || l.text.includes(words.slice(at + 1).join(' ')),
      );
      assert.ok(same && !same.textLayer, "the lied-about line is the model's reading");
    },
  );
});
