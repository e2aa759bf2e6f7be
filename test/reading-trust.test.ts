/** Never confident garbage: readings the model does not trust are marked, counted and shown as a gap. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemblePage, type LineOut, UNREADABLE_MARK } from '../src/document/assemble.js';
import type { PageLayout } from '../src/document/layout/analyze.js';
import { distrust, pageWarnings } from '../src/worker/reading-trust.js';

const box = { x: 0, y: 0, width: 600, height: 20 };

describe('trusting a reading', () => {
  it('distrusts a guess, an unsure loop and unsure readers that disagree; trusts sure leaders and sure text', () => {
    assert.equal(
      distrust({ text: 'utritaterisagisansossers', confidence: 0.42, ctcText: 'utritaterisagisansossers' }),
      'low-confidence',
    );
    assert.equal(
      distrust({
        text: 'th th the time ce ce ce ce ce ce ce',
        confidence: 0.7,
        ctcText: 'th th the time ce ce ce ce ce ce ce',
      }),
      'repeats',
    );
    assert.equal(distrust({ text: '() ==============', confidence: 0.66, ctcText: '() ==============' }), 'repeats');
    assert.equal(
      distrust({ text: 'pomAOWs lestessessen', confidence: 0.7, ctcText: 'a row mask' }),
      'readers-disagree',
    );
    assert.equal(
      distrust({
        text: 'Introduction ........................ 1',
        confidence: 0.95,
        ctcText: 'Introduction ........................ 1',
      }),
      null,
    );
    assert.equal(distrust({ text: 'The quick brown fox', confidence: 0.72, ctcText: 'The quick brown fox' }), null);
  });

  it(
    'an unreadable line keeps its reading in JSON and stands as a visible ' +
      'gap in the markdown; a heading of it is no heading',
    () => {
      const layout: PageLayout = {
        width: 600,
        height: 100,
        lineHeight: 20,
        rules: [],
        blocks: [
          { type: 'heading', level: 1, box, lines: [{ box, band: box }] },
          {
            type: 'paragraph',
            box,
            lines: [
              { box, band: box },
              { box, band: box },
            ],
          },
        ],
      };
      const bad: LineOut = {
        box,
        text: '({) utritaterisagis',
        confidence: 0.4,
        unreadable: true,
        distrust: 'low-confidence',
      };
      const page = assemblePage(0, layout, [[bad], [{ box, text: 'Read well.', confidence: 0.97 }, bad]]);
      assert.equal(page.blocks[0].type, 'paragraph');
      assert.equal(page.markdown, `${UNREADABLE_MARK}\n\nRead well. ${UNREADABLE_MARK}`);
      assert.equal(page.blocks[1].lines[1].text, '({) utritaterisagis');
    },
  );

  it('a page that read far less than its lines hold says so, and counts its unreadable lines', () => {
    const lines = Array.from({ length: 10 }, (_, i) => ({ box, text: i ? 'x' : 'garbage', unreadable: i === 0 }));
    const w = pageWarnings(lines, 20);
    assert.deepEqual(
      w.map((x) => x.kind),
      ['UNREADABLE_LINES', 'LITTLE_TEXT'],
    );
    const full = Array.from({ length: 10 }, () => ({
      box,
      text: 'A line of text as long as its box holds, more or less so.',
    }));
    assert.deepEqual(pageWarnings(full, 20), []);
  });
});
