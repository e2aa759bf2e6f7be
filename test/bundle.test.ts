/**
 * The bundle every launcher runs (dist/bundle, written by infra/bundle.mjs), against the modules tsc wrote
 * (dist/src) that the other tests import: the embedded server started from the bundle, as `npm start` starts it,
 * reads a page image and a PDF over real HTTP into what the unbundled CLI prints, and serves the playground's files
 * and its version from the package it was installed with.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ApiClient } from './helpers/api-client.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';
import { type SpeculaProcess, startSpecula } from './helpers/processes.js';

const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }';
const EVENTS =
  'subscription($id: ID!) { parseJobEvents(id: $id) { __typename ... on ' +
  'JobDone { job { status markdown } } ... on JobFailed { code message } ' +
  '} }';

interface Event {
  __typename: string;
  job?: { status: string; markdown: string };
  code?: string;
  message?: string;
}

/** What the CLI prints for a file when run from dist/src, module by module. */
async function unbundledParse(file: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'parse', file],
    { cwd: ROOT, maxBuffer: 1 << 24 },
  );
  return stdout.trim();
}

describe('the bundled build', () => {
  let server: SpeculaProcess;
  let client: ApiClient;
  let base: string;
  const dir = mkdtempSync(join(tmpdir(), 'specula-bundle-'));

  before(async () => {
    const { p, port } = await startSpecula('bundled', 'all', { SPECULA_ALLOW_ANONYMOUS: '1' });
    server = p;
    base = `http://127.0.0.1:${port}`;
    client = new ApiClient(base);
  });

  after(async () => {
    server.kill();
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  async function read(bytes: Uint8Array, name: string): Promise<string> {
    const created = await client.upload<{ createParseJob: { id: string } }>(
      CREATE,
      { input: { file: null } },
      ['input', 'file'],
      bytes,
      name,
    );
    assert.ok(created.data, JSON.stringify(created.errors));
    const events = await client.sse<{ parseJobEvents: Event }>(EVENTS, { id: created.data.createParseJob.id });
    const last = events[events.length - 1]?.data?.parseJobEvents;
    assert.equal(last?.__typename, 'JobDone', JSON.stringify(last));
    assert.equal(last.job?.status, 'SUCCEEDED');
    return (last.job?.markdown ?? '').trim();
  }

  it('the server started from the bundle reads a page image as the unbundled CLI does', async () => {
    const markdown = await read(readFileSync(SAMPLE_PAGE), 'sample-page.png');
    assert.ok(markdown.length > 200, 'the page has text');
    assert.equal(markdown, await unbundledParse(SAMPLE_PAGE));
  });

  it(
    'the server started from the bundle reads a PDF (mupdf and the layout ' +
      'thread load from it) as the unbundled CLI does',
    async () => {
      const pdf = pdfOfImages([readFileSync(SAMPLE_PAGE)]);
      const file = join(dir, 'sample.pdf');
      writeFileSync(file, pdf);
      assert.equal(await read(pdf, 'sample.pdf'), await unbundledParse(file));
    },
  );

  it("serves the playground's files and reports the installed version, found from the bundle's place", async () => {
    for (const path of [
      '/playground/',
      '/playground/playground.css',
      '/playground/playground.js',
      '/playground/api.js',
      '/playground/vendor/marked.js',
    ]) {
      const res = await fetch(base + path);
      assert.equal(res.status, 200, path);
      assert.ok((await res.text()).length > 100, path);
    }
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin', 'specula.js'), '--version'], {
      cwd: ROOT,
    });
    assert.equal(stdout.trim(), version);
  });
});
