import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { cropLines } from '../src/document/crop-lines.js';
import { decodeImage, type GrayPage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
import { cropLineImage, isOneLine } from '../src/document/line-image.js';
import { Engine } from '../src/engine/engine.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { loadLineSet } from '../src/eval/line-sets.js';
import { ned } from '../src/eval/ned.js';
import { loadPageSet } from '../src/eval/page-sets.js';
import { lineImageCrop } from '../src/worker/page-turn.js';
import { readDocument } from '../src/worker/read-document.js';
import { EVAL_DIR } from './helpers/eval-lines.js';
import { ROOT, SAMPLE_PAGE, SAMPLE_TEXT } from './helpers/fixtures.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'bin', 'specula.js');
const hasEval = existsSync(EVAL_DIR);

/** The sample page's printed lines as image files of their own (their padded layout boxes), with their truth. */
async function sampleLineFiles(dir: string): Promise<{ file: string; truth: string }[]> {
  const page = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
  const truth = readFileSync(SAMPLE_TEXT, 'utf8').trim().split('\n');
  return Promise.all(
    findLines(page).map(async (box, i) => {
      const file = join(dir, `line-${i}.png`);
      await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
        .extract({ left: box.x, top: box.y, width: box.width, height: box.height })
        .png()
        .toFile(file);
      return { file, truth: truth[i] ?? '' };
    }),
  );
}

async function grayOf(bytes: Uint8Array | string): Promise<GrayPage> {
  return decodeImage(typeof bytes === 'string' ? readFileSync(bytes) : bytes, 'image');
}

describe('line images', () => {
  let engine: Engine;
  let dir: string;
  before(async () => {
    engine = await Engine.open();
    dir = mkdtempSync(join(tmpdir(), 'specula-lines-'));
  });
  after(() => engine.close());

  it("every public docbank line crop through `specula parse` gives the engine line path's text", async () => {
    const lines = hasEval
      ? loadLineSet(EVAL_DIR, 'docbank_lines').map((l) => ({ file: l.image, truth: l.text }))
      : await sampleLineFiles(dir);
    const crops = await Promise.all(lines.map(async (l) => cropLineImage(await grayOf(l.file), engine.imageSpec)));
    const { lines: direct } = await engine.readLines(crops);
    const { stdout } = await run(process.execPath, [CLI, 'parse', '--json', ...lines.map((l) => l.file)], {
      cwd: ROOT,
      maxBuffer: 1 << 26,
    });
    const docs = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { text: string; pages: { blocks: { lines: unknown[] }[] }[] });
    assert.equal(docs.length, lines.length);
    const differ = docs.flatMap((d, i) =>
      d.text === direct[i].text ? [] : [`${lines[i].file}: parse "${d.text}" vs line path "${direct[i].text}"`],
    );
    assert.deepEqual(differ, [], 'each line image reads as the line path reads it');
    for (const d of docs) assert.equal(d.pages[0].blocks.flatMap((b) => b.lines).length, 1, 'one line, never split');
  });

  it(
    'a line image on its side reads as it reads upright, through `specula ' + 'parse` and the line path alike',
    async () => {
      const lines = await sampleLineFiles(dir);
      const upright = await engine.readLines(
        await Promise.all(lines.map(async (l) => cropLineImage(await grayOf(l.file), engine.imageSpec))),
      );
      for (const turn of [90, 270]) {
        const files = await Promise.all(
          lines.map(async (l, i) => {
            const file = join(dir, `line-${i}-turned-${turn}.png`);
            await sharp(l.file).rotate(turn).png().toFile(file);
            return file;
          }),
        );
        const { lines: direct } = await engine.readLines(
          await Promise.all(files.map(async (f) => lineImageCrop(engine, await grayOf(f)))),
        );
        assert.deepEqual(
          direct.map((l) => l.text),
          upright.lines.map((l) => l.text),
          `line path, turned ${turn}`,
        );
        const { stdout } = await run(process.execPath, [CLI, 'parse', '--json', ...files], {
          cwd: ROOT,
          maxBuffer: 1 << 26,
        });
        const docs = stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { text: string; pages: { rotation: number; blocks: { lines: unknown[] }[] }[] });
        assert.deepEqual(
          docs.map((d) => d.text),
          upright.lines.map((l) => l.text),
          `specula parse, turned ${turn}`,
        );
        for (const d of docs) {
          assert.equal(d.pages[0].rotation, 360 - turn, `turned ${turn}, read after a turn of ${360 - turn}`);
          assert.equal(d.pages[0].blocks.flatMap((b) => b.lines).length, 1, 'one line, never split');
        }
      }
    },
  );

  it('a page is never taken for a line image, and a line with a sliver of its neighbour is one line', async () => {
    for (const f of ['article.png', 'two-column.png', 'table.png', 'magazine.png']) {
      assert.equal(isOneLine(await grayOf(join(ROOT, 'test', 'fixtures', f))), false, f);
    }
    assert.equal(isOneLine(await grayOf(SAMPLE_PAGE)), false, 'the sample page');
    const page = await grayOf(SAMPLE_PAGE);
    const [a, b] = findLines(page).slice(1, 3);
    // The second line, with the bottom fifth of the line above cut in.
    const top = a.y + Math.round(a.height * 0.8);
    const cut = await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
      .extract({ left: b.x, top, width: b.width, height: b.y + b.height - top })
      .png()
      .toBuffer();
    assert.equal(isOneLine(await grayOf(cut)), true);
  });

  it('tight boxes (no margin, as receipts are cut) read as well as padded ones', async () => {
    const files = await sampleLineFiles(dir);
    const padded = await Promise.all(files.map(async (l) => cropLineImage(await grayOf(l.file), engine.imageSpec)));
    // The same lines cut to their ink: what scaled straight to 32 px gives glyphs taller than any trained on.
    const tight = await Promise.all(
      files.map(async (l) => {
        const trimmed = await sharp(l.file).trim({ threshold: 60 }).png().toBuffer();
        return cropLineImage(await grayOf(trimmed), engine.imageSpec);
      }),
    );
    const cer = async (crops: typeof padded): Promise<number> => {
      const { lines } = await engine.readLines(crops);
      return corpusCer(lines.map((r, i) => tally(r.text, files[i].truth)));
    };
    const [p, t] = [await cer(padded), await cer(tight)];
    assert.ok(t <= p + 0.005, `tight ${(100 * t).toFixed(2)}% vs padded ${(100 * p).toFixed(2)}%`);
  });

  it('light text on a coloured banner reads as the same line in ink on paper', async () => {
    const files = (await sampleLineFiles(dir)).slice(0, 4);
    const plain = await Promise.all(files.map(async (l) => cropLineImage(await grayOf(l.file), engine.imageSpec)));
    const banners = await Promise.all(
      files.map(async (l) => {
        // White letters on a dark teal banner: the ink becomes the light tone, the paper the colour.
        const mask = await sharp(l.file).greyscale().negate().raw().toBuffer({ resolveWithObject: true });
        const { width, height } = mask.info;
        const rgb = Buffer.alloc(width * height * 3);
        for (let i = 0; i < width * height; i++) {
          const ink = mask.data[i] / 255;
          rgb[3 * i] = Math.round(20 + ink * 230);
          rgb[3 * i + 1] = Math.round(90 + ink * 160);
          rgb[3 * i + 2] = Math.round(110 + ink * 140);
        }
        const png = await sharp(rgb, { raw: { width, height, channels: 3 } })
          .png()
          .toBuffer();
        return cropLineImage(await grayOf(png), engine.imageSpec);
      }),
    );
    const a = await engine.readLines(plain);
    const b = await engine.readLines(banners);
    const cer = corpusCer(b.lines.map((r, i) => tally(r.text, a.lines[i].text)));
    assert.ok(cer <= 0.02, `banner lines differ from the plain ones by ${(100 * cer).toFixed(2)}%`);
  });
});

describe('turned pages', () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.open();
  });
  after(() => engine.close());

  const pages = (): string[] => {
    const docbank = hasEval
      ? loadPageSet(EVAL_DIR, 'docbank_pages')
          .slice(0, 2)
          .map((p) => p.file)
      : [];
    return [SAMPLE_PAGE, ...docbank];
  };

  it('pages turned 90, 180 and 270 degrees are found, turned upright and read as they read upright', async () => {
    for (const file of pages()) {
      const bytes = readFileSync(file);
      const upright = await readDocument(engine, bytes, file);
      assert.equal(upright.pages[0].rotation, 0, `${file} upright`);
      for (const turn of [90, 180, 270]) {
        const turned = await sharp(bytes).rotate(turn).png().toBuffer();
        const read = await readDocument(engine, turned, `${file} turned ${turn}`);
        // Turned clockwise by `turn`, the page is read after a turn of 360 - turn.
        assert.equal(read.pages[0].rotation, (360 - turn) % 360, `${file} turned ${turn}`);
        const d = ned(read.markdown, upright.markdown);
        assert.ok(d <= 0.005, `${file} turned ${turn}: NED ${d.toFixed(4)} from its upright reading`);
      }
    }
  });

  it('the CTC head is far surer of a line the right way up than of it turned half round', async () => {
    const page = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
    const [box] = findLines(page);
    const [crop] = await cropLines(page, [box], engine.imageSpec);
    const scores = await engine.ctcConfidence([crop, { ...crop, data: crop.data.slice().reverse() }]);
    assert.ok(
      scores[0].logProb > scores[1].logProb + 0.1,
      `upright ${scores[0].logProb.toFixed(3)} vs turned ${scores[1].logProb.toFixed(3)}`,
    );
  });
});
