/**
 * When a backend breaks: clients get a masked INTERNAL error, the error goes to Sentry (a real HTTP ingest
 * endpoint here, named by SENTRY_DSN) with the job id, and the server keeps serving. Also URL input's guards.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { defaultMaxBatch } from '../src/engine/engine.js';
import { MemoryBlobStore } from '../src/jobs/blob-store.js';
import { MemoryJobStore } from '../src/jobs/memory-store.js';
import type { JobPage } from '../src/jobs/store.js';
import { refusedAddress } from '../src/resolvers/fetch-url.js';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { ApiClient, codes } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

/** A store whose listing is down, as a Redis outage would leave it. */
class ListingDownStore extends MemoryJobStore {
  override async list(): Promise<JobPage> {
    throw new Error('connection refused: 10.9.8.7:6379 (secret-host.internal)');
  }
}

/** Blob storage that loses its disk. */
class DiskGoneBlobs extends MemoryBlobStore {
  override async get(): Promise<Uint8Array | null> {
    throw new Error('EIO: /var/lib/specula/blobs unreadable');
  }
}

describe('unexpected failures are masked, reported and survived', () => {
  let ingest: Server;
  const envelopes: string[] = [];
  let server: RunningServer;
  let client: ApiClient;

  before(async () => {
    ingest = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        envelopes.push((req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8'));
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => ingest.listen(0, '127.0.0.1', () => r()));
    const dsn = `http://publickey@127.0.0.1:${(ingest.address() as AddressInfo).port}/1`;
    server = await startServer(
      configFromEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SPECULA_API_KEYS: 'acme:k1',
        SENTRY_DSN: dsn,
        SPECULA_URL_INPUT: '1',
        LOG_LEVEL: 'silent',
      }),
      { backends: { store: new ListingDownStore(), blobs: new DiskGoneBlobs() } },
    );
    client = new ApiClient(`http://127.0.0.1:${server.port}`, 'k1');
  });
  after(async () => {
    await server?.close();
    ingest?.close();
  });

  async function reported(needle: string): Promise<string> {
    for (let i = 0; i < 100; i++) {
      const hit = envelopes.find((e) => e.includes(needle));
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no Sentry event containing "${needle}"`);
  }

  it('a store outage reaches the client as a masked INTERNAL error and Sentry gets the details', async () => {
    const r = await client.query(`{ parseJobs(first: 5) { edges { node { id } } } }`);
    assert.deepEqual(codes(r), ['INTERNAL']);
    assert.doesNotMatch(JSON.stringify(r), /10\.9\.8\.7|secret-host|6379/, 'nothing internal leaks');
    const event = await reported('connection refused: 10.9.8.7');
    assert.match(event, /parseJobs/, 'the event names the field');
  });

  it('a job whose worker hits an outage fails as INTERNAL, reported with its job id', async () => {
    const bytes = readFileSync(SAMPLE_PAGE);
    const created = await client.query<{ createParseJob: { id: string } }>(
      `mutation($b: String!) { createParseJob(input: { base64: $b }) { id } }`,
      { b: bytes.toString('base64') },
    );
    const id = created.data?.createParseJob.id as string;
    const evs = await client.sse<{ parseJobEvents: { __typename: string; code?: string; message?: string } }>(
      `subscription($id: ID!) { parseJobEvents(id: $id) { __typename ... on JobFailed { code message } } }`,
      { id },
    );
    const last = evs[evs.length - 1].data?.parseJobEvents;
    assert.equal(last?.__typename, 'JobFailed');
    assert.equal(last?.code, 'INTERNAL');
    assert.doesNotMatch(last?.message ?? '', /EIO|var\/lib/);
    const event = await reported('EIO: /var/lib/specula/blobs');
    assert.ok(event.includes(id), 'the Sentry event carries the job id');
    // Still serving.
    const ok = await client.query<{ engine: { stats: { maxBatch: number } } }>(`{ engine { stats { maxBatch } } }`);
    assert.equal(ok.data?.engine.stats.maxBatch, defaultMaxBatch('cpu'));
  });

  it('URL input, when on, fetches only https from public addresses', async () => {
    const create = (url: string) =>
      client.query(`mutation($u: String!) { createParseJob(input: { url: $u }) { id } }`, { u: url });
    assert.deepEqual(codes(await create('http://example.com/a.png')), ['URL_REFUSED']);
    assert.deepEqual(codes(await create('file:///etc/passwd')), ['URL_REFUSED']);
    for (const url of [
      'https://127.0.0.1/a.png',
      'https://localhost/a.png',
      'https://[::1]/a.png',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.8/x',
      'https://[::ffff:192.168.1.1]/x',
    ]) {
      const r = await create(url);
      assert.deepEqual(codes(r), ['URL_REFUSED'], url);
    }
    assert.deepEqual(codes(await create('not a url')), ['BAD_USER_INPUT']);
  });

  it('classifies addresses: only public unicast may be fetched', () => {
    assert.equal(refusedAddress('93.184.216.34'), null);
    assert.equal(refusedAddress('2606:2800:220:1::1'), null);
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
    ]) {
      assert.notEqual(refusedAddress(a), null, a);
    }
  });
});
