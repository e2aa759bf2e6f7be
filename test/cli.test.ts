import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { corpusCer, tally } from '../src/eval/cer.js';
import { ROOT, SAMPLE_PAGE, SAMPLE_TEXT } from './helpers/fixtures.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'bin', 'specula.js');

async function specula(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 1 << 24 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('specula parse', () => {
  it('--format text prints one line of text per printed line of the sample page', async () => {
    const { code, stdout } = await specula('parse', '--format', 'text', SAMPLE_PAGE);
    assert.equal(code, 0);
    const truth = readFileSync(SAMPLE_TEXT, 'utf8').trim().split('\n');
    const got = stdout.split('\n').filter((l) => l.trim());
    assert.equal(got.length, truth.length);
  });

  it('prints markdown by default: a heading, then paragraphs', async () => {
    const { code, stdout } = await specula('parse', SAMPLE_PAGE);
    assert.equal(code, 0);
    const paragraphs = stdout.trim().split(/\n\n/);
    assert.match(paragraphs[0], /^#{1,3} /);
    assert.equal(paragraphs.length, 6, 'the title and five paragraphs');
  });

  it('--json gives the text, line boxes and the speculation metrics', async () => {
    const { code, stdout } = await specula('parse', '--json', '--drafter', 'ctc', '--verifier', 'greedy', '--draft-length', 'auto', SAMPLE_PAGE);
    assert.equal(code, 0);
    const doc = JSON.parse(stdout) as {
      text: string;
      markdown: string;
      pages: { blocks: { type: string; order: number; lines: { box: { y: number }; text: string; confidence: number }[] }[] }[];
      metrics: Record<string, unknown> & { forwards: number; lines: number; meanAcceptanceLength: number };
    };
    const lines = doc.pages[0].blocks.flatMap((b) => b.lines);
    assert.equal(lines.length, doc.metrics.lines);
    assert.deepEqual(doc.pages[0].blocks.map((b) => b.order), doc.pages[0].blocks.map((_, i) => i));
    for (const l of lines) assert.ok(l.confidence >= 0 && l.confidence <= 1);
    for (const key of ['forwards', 'drafts', 'draftTokens', 'acceptedTokens', 'meanAcceptanceLength', 'acceptanceByPosition', 'decodeMs']) {
      assert.ok(key in doc.metrics, `metrics.${key}`);
    }
    assert.ok(doc.metrics.forwards > 0 && doc.metrics.meanAcceptanceLength >= 1);
  });

  it('a bad file gets its typed error and the good files are still read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'specula-cli-'));
    const bad = join(dir, 'notes.png');
    writeFileSync(bad, 'plain text, not a picture\n');
    const { code, stdout, stderr } = await specula('parse', bad, SAMPLE_PAGE);
    assert.equal(code, 1);
    assert.match(stderr, /\[UNSUPPORTED_FORMAT\]/);
    assert.ok(stderr.includes(bad), 'the error names the file');
    assert.ok(stdout.includes(`==> ${SAMPLE_PAGE} <==`), 'the good file is still read');
  });

  it('an unknown device is refused with the choices', async () => {
    const { code, stderr } = await specula('parse', '--device', 'tpu', SAMPLE_PAGE);
    assert.equal(code, 1);
    assert.match(stderr, /cpu or cuda/);
  });
});

describe('scoring', () => {
  it('CER folds Unicode compatibility forms and whitespace before counting edits', () => {
    assert.equal(corpusCer([tally('ﬁne  day', 'fine day')]), 0);
    assert.equal(corpusCer([tally('abc', 'abd'), tally('', 'xy')]), 3 / 5);
  });
});
