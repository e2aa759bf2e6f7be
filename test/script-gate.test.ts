import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { cropLines } from '../src/document/crop-lines.js';
import { decodeImage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
import { cropLineImage } from '../src/document/line-image.js';
import { Engine } from '../src/engine/engine.js';
import { loadLineSet } from '../src/eval/line-sets.js';
import { readDocument } from '../src/worker/read-document.js';
import { EVAL_DIR } from './helpers/eval-lines.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';

// A page of Korean text (random everyday syllables in Nanum Gothic, made here; the model's alphabet is Latin).
const KOREAN_PAGE = join(ROOT, 'test', 'fixtures', 'korean-page.png');
const hasEval = existsSync(EVAL_DIR);
const run = promisify(execFile);

describe('a page in a script the model never learnt', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  it(
    'is found from its lines, named, and read by the CTC head alone: every line ' + 'marked unread, no decoder forward',
    async () => {
      const doc = await readDocument(engine, readFileSync(KOREAN_PAGE), 'korean-page.png');
      const lines = doc.pages[0].blocks.flatMap((b) => b.lines);
      assert.ok(lines.length >= 15, `the page's lines are found (${lines.length})`);
      assert.deepEqual(
        lines.filter((l) => !l.unread).map((l) => l.text),
        [],
        'every line is marked unread',
      );
      assert.equal(doc.metrics.forwards, 0, 'nothing was decoded');
      assert.deepEqual(
        doc.pages[0].warnings?.filter((w) => w.kind === 'UNREAD_SCRIPT').map((w) => w.message),
        ['the page is in Hangul, which the model does not read'],
      );
    },
  );

  it(
    'a gated line gives its CTC reading, and a line the gate does not flag ' + 'reads as it does without the gate',
    async () => {
      const korean = await decodeImage(readFileSync(KOREAN_PAGE), KOREAN_PAGE);
      const sample = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
      const crops = [
        ...(await cropLines(korean, findLines(korean).slice(0, 4), engine.imageSpec)),
        ...(await cropLines(sample, findLines(sample), engine.imageSpec)),
      ];
      const gated = await engine.readLines(crops, { unreadScripts: true });
      const plain = await engine.readLines(crops);
      gated.lines.forEach((g, i) => {
        if (g.unread) assert.equal(g.text, g.ctcText, 'an unread line is its CTC reading');
        else assert.equal(g.text, plain.lines[i].text, 'a line left to the decoder reads as without the gate');
      });
      assert.deepEqual(
        gated.lines.slice(0, 4).map((l) => l.unread === true),
        [true, true, true, true],
        'the Korean lines are gated',
      );
      assert.deepEqual(
        gated.lines
          .slice(4)
          .filter((l) => l.unread)
          .map((l) => l.text),
        [],
        'no line of the sample page is',
      );
    },
  );

  it('specula parse marks the lines unread in its JSON, and --no-script-gate decodes them', async () => {
    const cli = join(ROOT, 'bin', 'specula.js');
    const lines = async (...flags: string[]): Promise<{ text: string; unread?: boolean }[]> => {
      const { stdout } = await run(process.execPath, [cli, 'parse', '--json', ...flags, KOREAN_PAGE], {
        cwd: ROOT,
        maxBuffer: 1 << 24,
      });
      return (
        JSON.parse(stdout) as { pages: { blocks: { lines: { text: string; unread?: boolean }[] }[] }[] }
      ).pages[0].blocks.flatMap((b) => b.lines);
    };
    const [gated, decoded] = await Promise.all([lines(), lines('--no-script-gate')]);
    assert.ok(gated.length >= 15 && gated.every((l) => l.unread === true));
    assert.deepEqual(
      decoded.filter((l) => l.unread).map((l) => l.text),
      [],
    );
  });

  it('leaves pages in Latin script to the decoder: no line of the sample page is unread', async () => {
    const doc = await readDocument(engine, readFileSync(SAMPLE_PAGE), 'sample-page.png');
    assert.deepEqual(
      doc.pages[0].blocks
        .flatMap((b) => b.lines)
        .filter((l) => l.unread)
        .map((l) => l.text),
      [],
    );
  });

  it(
    'flags none of the public docbank and UW3 lines, so a page of them is never read by the CTC head',
    { skip: !hasEval && 'no ../shared/eval here' },
    async () => {
      const lines = [...loadLineSet(EVAL_DIR, 'docbank_lines'), ...loadLineSet(EVAL_DIR, 'ocropy_uw3_500')];
      const crops = await Promise.all(
        lines.map(async (l) => cropLineImage(await decodeImage(readFileSync(l.image), l.image), engine.imageSpec)),
      );
      const scores: { unread: number }[] = [];
      for (let i = 0; i < crops.length; i += 32) scores.push(...(await engine.ctcConfidence(crops.slice(i, i + 32))));
      const flagged = scores.flatMap((s, i) => (s.unread > 0 ? [`${lines[i].image}: ${s.unread.toFixed(2)}`] : []));
      assert.deepEqual(flagged, []);
    },
  );
});
