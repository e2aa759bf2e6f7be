/**
 * Pages as phones photograph them: the sheet found on the desk, straightened and relit before it is read, and read
 * as its scan reads; scans and rendered pages left untouched; the CLI and the API say where the sheet lay.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { evenLight, findSheet, fromCapture } from '../src/document/capture.js';
import { decodeImage } from '../src/document/decode-image.js';
import { homography, mapPoint } from '../src/document/homography.js';
import { Engine } from '../src/engine/engine.js';
import { ned } from '../src/eval/ned.js';
import { photograph, photoParams } from '../src/eval/photograph.js';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { readDocument } from '../src/worker/read-document.js';
import { ApiClient } from './helpers/api-client.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';

const run = promisify(execFile);
const cli = join(ROOT, 'bin', 'specula.js');
const sample = readFileSync(SAMPLE_PAGE);

describe('a photographed page', () => {
  let engine: Engine;
  let photo: Uint8Array;
  let work: string;
  let server: RunningServer;
  before(async () => {
    engine = await Engine.open();
    photo = await photograph(await decodeImage(sample, SAMPLE_PAGE), 'sample-page');
    work = mkdtempSync(join(tmpdir(), 'specula-photo-'));
    writeFileSync(join(work, 'photo.jpg'), photo);
  });
  after(async () => {
    await engine?.close();
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a homography takes each of four points where it was asked to', () => {
    const from = [
      { x: 0, y: 0 },
      { x: 100, y: 0 },
      { x: 100, y: 50 },
      { x: 0, y: 50 },
    ];
    const to = [
      { x: 10, y: 5 },
      { x: 120, y: 12 },
      { x: 115, y: 70 },
      { x: 3, y: 61 },
    ];
    const h = homography(from, to);
    assert.ok(h);
    from.forEach((p, i) => {
      const q = mapPoint(h, p);
      assert.ok(Math.abs(q.x - to[i].x) < 1e-6 && Math.abs(q.y - to[i].y) < 1e-6, JSON.stringify(q));
    });
  });

  it('scans and rendered pages have no sheet to find and even light: they pass through untouched', async () => {
    const page = await decodeImage(sample, SAMPLE_PAGE);
    assert.equal(findSheet(page), null);
    assert.equal(evenLight(page), null);
    const same = fromCapture(page);
    assert.equal(same.page, page);
  });

  it('finds the sheet at the angle the photographer turned it, and relights it', async () => {
    const page = await decodeImage(photo, 'photo.jpg');
    const p = photoParams('sample-page');
    const captured = fromCapture(page);
    assert.ok(captured.sheet, 'no sheet found');
    assert.ok(captured.relit);
    // The sheet's top-left corner lies where the photograph put the page's corner: a margin in, turned, pulled.
    const tl = captured.sheet[0];
    const tr = captured.sheet[1];
    const turned = (Math.atan2(tr.y - tl.y, tr.x - tl.x) * 180) / Math.PI;
    assert.ok(
      Math.abs(turned - p.degrees) < 3,
      `the sheet's top edge runs at ${turned.toFixed(1)} degrees; the photograph turned it ${p.degrees.toFixed(1)}`,
    );
  });

  it('reads the photograph as it reads the scan, every box within the photograph, the sheet reported', async () => {
    const scan = await readDocument(engine, sample, 'sample-page.png');
    const shot = await readDocument(engine, photo, 'photo.jpg');
    const page = shot.pages[0];
    assert.ok(page.sheet?.length === 4);
    const d = ned(shot.markdown, scan.markdown);
    assert.ok(d < 0.05, `photograph read ${d.toFixed(3)} NED from the scan's reading:\n${shot.markdown}`);
    for (const b of page.blocks) {
      for (const l of b.lines)
        assert.ok(
          l.box.x >= 0 && l.box.y >= 0 && l.box.x + l.box.width <= page.width && l.box.y + l.box.height <= page.height,
          JSON.stringify(l.box),
        );
    }
    assert.deepEqual(page.warnings ?? [], []);
  });

  it("the CLI and the API hand back the sheet and the page's warnings", async () => {
    const json = JSON.parse(
      (await run('node', [cli, 'parse', join(work, 'photo.jpg'), '--format', 'json'], { maxBuffer: 16 << 20 })).stdout,
    ) as { unreadableLines: number; pages: { sheet: unknown[] }[] };
    assert.equal(json.pages[0].sheet.length, 4);
    assert.equal(typeof json.unreadableLines, 'number');
    server = await startServer(
      configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'acme:key-acme-1', LOG_LEVEL: 'silent' }),
    );
    const api = new ApiClient(`http://127.0.0.1:${server.port}`, 'key-acme-1');
    const created = await api.upload<{ createParseJob: { id: string } }>(
      `mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }`,
      { input: { file: null } },
      ['input', 'file'],
      photo,
      'photo.jpg',
    );
    assert.equal(created.errors, undefined, JSON.stringify(created.errors));
    const id = (created.data as { createParseJob: { id: string } }).createParseJob.id;
    await api.sse(`subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }`, { id });
    type Job = {
      status: string;
      unreadableLines: number;
      pages: { sheet: { x: number; y: number }[]; unreadableLines: number; warnings: { kind: string }[] }[];
    };
    const q = await api.query<{ parseJob: Job }>(
      `query($id: ID!) { parseJob(id: $id) { status unreadableLines pages { ` +
        `sheet { x y } unreadableLines warnings { kind message } } } }`,
      { id },
    );
    assert.equal(q.errors, undefined, JSON.stringify(q.errors));
    const job = (q.data as { parseJob: Job }).parseJob;
    assert.equal(job.status, 'SUCCEEDED');
    assert.equal(job.pages[0].sheet.length, 4);
    assert.equal(job.unreadableLines, job.pages[0].unreadableLines);
    assert.deepEqual(job.pages[0].warnings, []);
  });
});
