import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Engine } from '../src/engine/engine.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { plainText, readDocument } from '../src/worker/read-document.js';
import { ROOT } from './helpers/fixtures.js';

// Articles 1 and 2 of the Universal Declaration of Human Rights, set as plain pages (test/fixtures/european/make.py).
const FIXTURES = join(ROOT, 'test', 'fixtures', 'european');
const EUROPE = join(ROOT, 'models', 'specula-line-europe');
const PAGES = [
  { lang: 'pl', language: 'pol', script: 'Latin' },
  { lang: 'ru', language: 'rus', script: 'Cyrillic' },
  { lang: 'el', language: 'ell', script: 'Greek' },
];
/** Character error rate a page may have: 5% of its 450-1,000 characters is a few letters a line. */
const MAX_CER = 0.05;

describe('pages in Polish, Russian and Greek, read by the European bundle', () => {
  let engine: Engine;
  let base: Engine;
  before(async () => {
    engine = await Engine.open(EUROPE);
    base = await Engine.open();
  });
  after(async () => {
    await engine.close();
    await base.close();
  });

  for (const { lang, language, script } of PAGES) {
    it(`reads the ${lang} page in its own letters, and names its script and language`, async () => {
      const doc = await readDocument(engine, readFileSync(join(FIXTURES, `${lang}.png`)), `${lang}.png`);
      const truth = readFileSync(join(FIXTURES, `${lang}.txt`), 'utf8');
      const read = plainText(doc.pages);
      const cer = corpusCer([tally(read.replace(/\s+/g, ' '), truth.replace(/\s+/g, ' '))]);
      assert.ok(cer <= MAX_CER, `CER ${(cer * 100).toFixed(2)}%: ${read}`);
      const page = doc.pages[0];
      assert.equal(page.language, language);
      assert.equal(page.scripts?.[0].script, script);
      assert.equal(page.blocks.flatMap((b) => b.lines).filter((l) => l.unread).length, 0, 'no line left to the gate');
    });
  }

  it('the default bundle names the Cyrillic and Greek of those pages as scripts it does not read', async () => {
    for (const [lang, name] of [
      ['ru', 'Cyrillic'],
      ['el', 'Greek'],
    ]) {
      const doc = await readDocument(base, readFileSync(join(FIXTURES, `${lang}.png`)), `${lang}.png`);
      const warning = doc.pages[0].warnings?.find((w) => w.kind === 'UNREAD_SCRIPT');
      assert.match(
        warning?.message ?? '',
        new RegExp(`in ${name},`),
        `${lang}: ${JSON.stringify(doc.pages[0].warnings)}`,
      );
      assert.equal(doc.pages[0].scripts?.[0].script, name);
    }
  });
});
