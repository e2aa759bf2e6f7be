import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { decodeImage } from '../src/document/decode-image.js';
import { findLines } from '../src/document/layout/lines.js';
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

describe('specula eval', () => {
  it('scores a folder of line images listed in labels.tsv (--line-dir) as a line set of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'specula-line-dir-'));
    // The sample page's first printed line, cut out as a line image, with its truth (and a third column, ignored).
    const page = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
    const [box] = findLines(page);
    await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } })
      .extract({ left: box.x, top: box.y, width: box.width, height: box.height })
      .png()
      .toFile(join(dir, 'line.png'));
    const truth = readFileSync(SAMPLE_TEXT, 'utf8').trim().split('\n')[0];
    writeFileSync(join(dir, 'labels.tsv'), `line.png\t${truth}\tsample-page.png:1\n`);
    const out = join(dir, 'report.json');
    const { code, stderr } = await specula(
      'eval',
      '--suite',
      'lines',
      '--line-dir',
      dir,
      '--no-tesseract',
      '--verifier',
      'joint',
      '--out',
      out,
    );
    assert.equal(code, 0, stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      sets: { set: string; lines: number; ours: { cer: number } }[];
    };
    assert.deepEqual(
      report.sets.map((s) => [s.set, s.lines]),
      [[dir.split('/').pop(), 1]],
      'that folder alone, one line',
    );
    assert.ok(report.sets[0].ours.cer < 0.05, `the sample line read within 5% CER (${report.sets[0].ours.cer})`);
  });
});

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
    const { code, stdout } = await specula(
      'parse',
      '--json',
      '--drafter',
      'ctc',
      '--verifier',
      'greedy',
      '--draft-length',
      'auto',
      SAMPLE_PAGE,
    );
    assert.equal(code, 0);
    const doc = JSON.parse(stdout) as {
      text: string;
      markdown: string;
      pages: {
        blocks: { type: string; order: number; lines: { box: { y: number }; text: string; confidence: number }[] }[];
      }[];
      metrics: Record<string, unknown> & { forwards: number; lines: number; meanAcceptanceLength: number };
    };
    const lines = doc.pages[0].blocks.flatMap((b) => b.lines);
    assert.equal(lines.length, doc.metrics.lines);
    assert.deepEqual(
      doc.pages[0].blocks.map((b) => b.order),
      doc.pages[0].blocks.map((_, i) => i),
    );
    for (const l of lines) assert.ok(l.confidence >= 0 && l.confidence <= 1);
    // Exactly what docs/cli.md says --json prints.
    const readme = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const said = /`\{ (file, format[^}]*) \}`/.exec(readme)?.[1].split(', ') ?? [];
    assert.deepEqual(Object.keys(doc).sort(), [...said].sort(), "the document record has the README's keys");
    const saidMetrics = /`metrics` is `\{ ([^}]*) \}`/.exec(readme.replace(/\n/g, ' '))?.[1].split(', ') ?? [];
    assert.deepEqual(
      Object.keys(doc.metrics).sort(),
      [...saidMetrics].sort(),
      "metrics has the README's keys, visualTokenRatio among them",
    );
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

  it('several documents read at once come out in the order given, each as it reads alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'specula-cli-'));
    // A small document first and last: read in flight, the small ones finish before the page between them.
    const page = readFileSync(SAMPLE_PAGE);
    const sharp = (await import('sharp')).default;
    const meta = await sharp(page).metadata();
    const top = join(dir, 'top.png');
    await sharp(page)
      .extract({ left: 0, top: 0, width: meta.width ?? 1, height: Math.round((meta.height ?? 2) / 4) })
      .png()
      .toFile(top);
    const files = [top, SAMPLE_PAGE, top, SAMPLE_PAGE, top];
    const together = await specula('parse', '--format', 'text', ...files);
    assert.equal(together.code, 0);
    const heads = [...together.stdout.matchAll(/^==> (.*) <==$/gm)].map((m) => m[1]);
    assert.deepEqual(heads, files, 'one section per file, in the order given');
    const alone = await specula('parse', '--format', 'text', top);
    const sections = together.stdout
      .split(/^==> .* <==\n/m)
      .slice(1)
      .map((x) => x.trim());
    assert.equal(sections[0], alone.stdout.trim(), 'a document reads the same beside others as alone');
    assert.equal(sections[2], sections[0]);
    assert.equal(sections[1], sections[3]);
  });

  it(
    'reads a batch whose file names fill more than 15 KB of command line ' +
      '(onnxruntime crashed on such a command line)',
    async () => {
      const page = await decodeImage(readFileSync(SAMPLE_PAGE), SAMPLE_PAGE);
      const [box] = findLines(page);
      const dir = mkdtempSync(join(tmpdir(), `specula-${'a'.repeat(80)}-`));
      const line = join(dir, 'line.png');
      await sharp(readFileSync(SAMPLE_PAGE))
        .extract({ left: box.x, top: box.y, width: box.width, height: box.height })
        .toFile(line);
      const files = Array.from({ length: 150 }, (_, i) => join(dir, `scan-${String(i).padStart(3, '0')}.png`));
      for (const f of files) symlinkSync(line, f);
      assert.ok(files.join(' ').length > 15_000);
      const { code, stdout, stderr } = await specula('parse', '--format', 'text', ...files);
      assert.equal(code, 0, stderr);
      const printed = stdout.trim().split('\n').filter(Boolean);
      const lines = printed.filter((l) => !l.startsWith('==> '));
      assert.equal(printed.length - lines.length, 150, 'a header per file');
      assert.equal(lines.length, 150, 'one line of text per file');
      assert.equal(new Set(lines).size, 1, 'each file read alike');
      assert.deepEqual(
        readdirSync(tmpdir()).filter((f) => f.startsWith('specula-args-')),
        [],
        'the handed-over arguments are removed',
      );
    },
  );

  it('--json reports the milliseconds of each stage of the page path', async () => {
    const { code, stdout } = await specula('parse', '--json', SAMPLE_PAGE);
    assert.equal(code, 0);
    const doc = JSON.parse(stdout) as { stagesMs: Record<string, number> };
    assert.deepEqual(Object.keys(doc.stagesMs).sort(), [
      'assemble',
      'crop',
      'decode',
      'flatten',
      'layout',
      'orient',
      'render',
      'vision',
    ]);
    for (const k of ['render', 'layout', 'vision', 'decode'])
      assert.ok(doc.stagesMs[k] > 0, `${k}: ${doc.stagesMs[k]}`);
  });

  it('--precision fp32 reads the float vision graph; an unknown precision is a clear error', async () => {
    const fp32 = await specula('parse', '--precision', 'fp32', '--format', 'text', SAMPLE_PAGE);
    assert.equal(fp32.code, 0);
    assert.ok(fp32.stdout.trim().length > 100);
    const bad = await specula('parse', '--precision', 'fp16', SAMPLE_PAGE);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /\[INVALID_PRECISION\] precision must be one of fp32, int8/);
  });

  it(
    '--help per command and --version exit 0; no command, a missing file ' + 'and an unknown flag say so in words',
    async () => {
      const help = await specula('parse', '--help');
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^usage: specula parse FILE\.\.\./);
      assert.match(help.stdout, /--visual-keep/);
      for (const cmd of ['eval', 'serve', 'check-bundle']) {
        const h = await specula(cmd, '--help');
        assert.equal(h.code, 0, cmd);
        assert.match(h.stdout, new RegExp(`^usage: specula ${cmd}`));
      }
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      const version = await specula('--version');
      assert.equal(version.code, 0);
      assert.equal(version.stdout.trim(), pkg.version);
      const top = await specula('--help');
      assert.equal(top.code, 0);
      assert.match(top.stdout, /parse FILE\.\.\./);
      const bare = await specula();
      assert.equal(bare.code, 2, 'no command is a usage error');
      assert.match(bare.stderr, /parse FILE\.\.\./);
      const missing = await specula('parse', '/no/such/page.png');
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr.trim(), 'specula parse: /no/such/page.png: no such file');
      const flag = await specula('parse', '--bogus', SAMPLE_PAGE);
      assert.equal(flag.code, 2);
      assert.match(flag.stderr, /^specula parse: Unknown option '--bogus' \(specula parse --help lists the options\)/);
      const unknown = await specula('frobnicate');
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown command "frobnicate"/);
    },
  );

  it('an unknown device is refused with the choices', async () => {
    const { code, stderr } = await specula('parse', '--device', 'tpu', SAMPLE_PAGE);
    assert.equal(code, 1);
    assert.match(stderr, /--device must be one of cpu, webgpu, cuda, auto/);
  });

  it('a batch or thread count that is not a whole number is refused before the model loads', async () => {
    for (const [flag, value] of [
      ['--batch', 'eight'],
      ['--batch', '-1'],
      ['--threads', '1.5'],
    ]) {
      const { code, stderr } = await specula('parse', `${flag}=${value}`, SAMPLE_PAGE);
      assert.equal(code, 1, `${flag} ${value}`);
      assert.match(stderr, new RegExp(`${flag} must be a whole number`));
    }
  });

  it(
    'a thread count past four a core is refused at once, from the flag or ' +
      'SPECULA_THREADS (100,000 once hung the host)',
    async () => {
      const flag = await specula('parse', '--threads', '100000', SAMPLE_PAGE);
      assert.equal(flag.code, 1);
      assert.match(flag.stderr, /\[INVALID_OPTIONS\] threads must be a whole number from 1 to \d+ \(4 a core/);
      const { stderr } = await run(process.execPath, [CLI, 'parse', SAMPLE_PAGE], {
        cwd: ROOT,
        env: { ...process.env, SPECULA_THREADS: '100000' },
      }).catch((e: { stderr: string }) => e);
      assert.match(stderr, /threads must be a whole number from 1 to/);
    },
  );
});

describe('scoring', () => {
  it('CER folds Unicode compatibility forms and whitespace before counting edits', () => {
    assert.equal(corpusCer([tally('ﬁne  day', 'fine day')]), 0);
    assert.equal(corpusCer([tally('abc', 'abd'), tally('', 'xy')]), 3 / 5);
  });
});
