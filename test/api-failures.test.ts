/**
 * When a backend breaks: clients get a masked INTERNAL error, the error goes to Sentry (a real HTTP ingest
 * endpoint here, named by SENTRY_DSN) with the job id, and the server keeps serving. Also URL input's guards.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import WebSocket from 'ws';
import { defaultMaxBatch } from '../src/engine/engine.js';
import { MemoryBlobStore } from '../src/jobs/blob-store.js';
import { MemoryJobStore } from '../src/jobs/memory-store.js';
import type { JobPage } from '../src/jobs/store.js';
import { refusedAddress } from '../src/resolvers/fetch-url.js';
import { configFromEnv } from '../src/server/config.js';
import { flushReports } from '../src/server/sentry.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { ApiClient, codes, type GqlResult } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';
import { assertRedisReachable, TEST_REDIS } from './helpers/redis.js';

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
    const local = await sentryIngest(envelopes);
    ingest = local.ingest;
    const dsn = local.dsn;
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

/** A Sentry ingest endpoint on a local port: every envelope it receives, as text. */
async function sentryIngest(envelopes: string[]): Promise<{ ingest: Server; dsn: string }> {
  const ingest = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      envelopes.push((req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8'));
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => ingest.listen(0, '127.0.0.1', () => r()));
  return { ingest, dsn: `http://publickey@127.0.0.1:${(ingest.address() as AddressInfo).port}/1` };
}

describe("a hostile client's requests are its own fault: not errors, not reported", () => {
  interface LogLine {
    level: number;
    msg: string;
    code?: string;
  }
  const envelopes: string[] = [];
  const logs: LogLine[] = [];
  const prefix = `hostile-${randomUUID().slice(0, 8)}`;
  let ingest: Server;
  let server: RunningServer;
  let base: string;
  let client: ApiClient;
  /** An 8x8 PNG: these tests are about ids and limits, not reading (an API process with Redis reads nothing). */
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAAAAADhZOFXAAAAEklEQVR4nGP8z8DAwMDAxAADABIgAgFN2uD1AAAAAElFTkSuQmCC';
  const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }';
  const CANCEL = 'mutation($id: ID!) { cancelParseJob(id: $id) { __typename ... on Error { code } } }';

  before(async () => {
    await assertRedisReachable();
    const sentry = await sentryIngest(envelopes);
    ingest = sentry.ingest;
    server = await startServer(
      configFromEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SPECULA_API_KEYS: 'acme:k1',
        SENTRY_DSN: sentry.dsn,
        SPECULA_ROLE: 'api',
        SPECULA_REDIS_URL: TEST_REDIS,
        SPECULA_REDIS_PREFIX: prefix,
        SPECULA_MAX_UPLOAD_BYTES: String(1024 * 1024),
      }),
      { logger: pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) }) },
    );
    base = `http://127.0.0.1:${server.port}`;
    client = new ApiClient(base, 'k1');
  });
  after(async () => {
    await server?.close();
    ingest?.close();
    const redis = new Redis(TEST_REDIS);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** What each way of naming a job answers for this id, with the id itself taken out of the messages. */
  async function answers(id: string): Promise<unknown> {
    const plain = (r: GqlResult<unknown>): unknown => JSON.parse(JSON.stringify(r).replaceAll(id, '<id>'));
    const pdf = await fetch(`${base}/jobs/${id}/searchable.pdf`, { headers: { authorization: 'Bearer k1' } });
    return {
      parseJob: plain(await client.query('query($id: ID!) { parseJob(id: $id) { id } }', { id })),
      cancelParseJob: plain(await client.query(CANCEL, { id })),
      parseJobEvents: (
        await client.sse('subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }', { id })
      ).map(plain),
      download: { status: pdf.status, body: await pdf.text() },
    };
  }

  it('an id the store never made (`<id>:events`, `:seq`, `:final`) is answered as an unknown id, quietly', async () => {
    const made = await client.query<{ createParseJob: { id: string } }>(CREATE, { input: { base64: PNG } });
    const id = made.data?.createParseJob.id as string;
    // Cancelled, the job has its events list, sequence counter and final mark beside its own key.
    assert.deepEqual((await client.query(CANCEL, { id })).data, { cancelParseJob: { __typename: 'ParseJob' } });
    const unknown = await answers(randomUUID());
    assert.deepEqual(unknown, {
      parseJob: { status: 200, data: { parseJob: null } },
      cancelParseJob: { status: 200, data: { cancelParseJob: { __typename: 'NotFoundError', code: 'NOT_FOUND' } } },
      parseJobEvents: [
        {
          status: 200,
          errors: [
            {
              message: 'no parse job with id "<id>"',
              locations: [{ line: 1, column: 26 }],
              path: ['parseJobEvents'],
              extensions: { code: 'NOT_FOUND' },
            },
          ],
        },
      ],
      download: {
        status: 404,
        body: JSON.stringify({
          errors: [
            {
              message:
                'no searchable PDF for this job: it is not yours, not finished, or did not ask for SEARCHABLE_PDF',
              extensions: { code: 'NOT_FOUND' },
            },
          ],
        }),
      },
    });
    logs.length = 0;
    for (const hostile of [`${id}:events`, `${id}:seq`, `${id}:final`, id.toUpperCase(), `${id}%3Aevents`, 'job:*'])
      assert.deepEqual(await answers(hostile), unknown, hostile);
    assert.deepEqual(
      logs.filter((l) => l.level >= 50),
      [],
      'nothing logged as an error',
    );
    await flushReports();
    assert.deepEqual(
      envelopes.filter((e) => e.includes('"exception"')),
      [],
      'nothing reported to Sentry',
    );
  });

  it('a body over the upload limit is answered 413 and logged once as a warning, without a stack', async () => {
    logs.length = 0;
    // 1.5 MiB declared: within the allowance for multipart framing, so the body parser is what finds it too big.
    const big = new Uint8Array(1536 * 1024);
    const r = await client.upload(CREATE, { input: { file: null } }, ['input', 'file'], big, 'big.png');
    assert.equal(r.status, 413);
    assert.deepEqual(codes(r), ['UPLOAD_TOO_LARGE']);
    assert.deepEqual(
      logs.filter((l) => l.level >= 50),
      [],
      'not an error of ours',
    );
    const told = logs.filter((l) => l.code === 'UPLOAD_TOO_LARGE');
    assert.equal(told.length, 1, JSON.stringify(logs));
    assert.equal(told[0].level, 40);
    assert.doesNotMatch(JSON.stringify(told[0]), /stack|\\n\s+at /);
  });
});

describe('a refusal says why with a stable code, and echoes at most a short prefix of what it was sent', () => {
  let server: RunningServer;
  let base: string;
  let client: ApiClient;
  const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }';

  before(async () => {
    server = await startServer(
      configFromEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SPECULA_API_KEYS: 'acme:k1',
        // A body may then hold about 2.4 MB (base64 of 1 MB, and room for the rest); so may a WebSocket message.
        SPECULA_MAX_UPLOAD_BYTES: '1000000',
        LOG_LEVEL: 'silent',
      }),
    );
    base = `http://127.0.0.1:${server.port}`;
    client = new ApiClient(base, 'k1');
  });
  after(() => server?.close());

  it('a variable the schema cannot take is BAD_USER_INPUT, over HTTP and over graphql-ws', async () => {
    const bogus = await client.query(CREATE, { input: { base64: 'aGk=', decoding: { drafter: 'BOGUS' } } });
    assert.deepEqual(codes(bogus), ['BAD_USER_INPUT']);
    assert.match(bogus.errors?.[0].message ?? '', /BOGUS/);
    assert.deepEqual(codes(await client.query(CREATE, {})), ['BAD_USER_INPUT'], 'a required variable left out');
    const overWs = await client.ws('subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }', { id: [1] });
    assert.deepEqual(overWs.flatMap(codes), ['BAD_USER_INPUT']);
  });

  it('an error message quotes at most 100 characters of a value it was sent', async () => {
    const big = 'A'.repeat(1_170_000); // 1.17 MB: within this server's body limit
    const refused = [
      await client.query(CREATE, { input: big }),
      await client.query(CREATE, { input: { base64: 'aGk=', decoding: { draftLength: big } } }),
      await client.query(CREATE, { input: { base64: 'aGk=', [big]: 1 } }),
    ];
    for (const r of refused) {
      assert.deepEqual(codes(r), ['BAD_USER_INPUT']);
      const text = JSON.stringify(r.errors);
      assert.ok(text.length < 1000, `${text.length} characters of errors`);
      assert.match(text, /A{100}…/, 'the value is still recognisable');
      assert.doesNotMatch(text, /A{101}/);
    }
    // A literal in the query, refused at validation, likewise.
    const literal = await client.query(`{ parseJob(id: ${'9'.repeat(300_000)}.5) { id } }`);
    assert.deepEqual(codes(literal), ['GRAPHQL_VALIDATION_FAILED']);
    assert.ok(JSON.stringify(literal.errors).length < 1000);
  });

  it('decoding values out of their range are INVALID_DECODING, as docs/api.md promises', async () => {
    const outOfRange = [
      { draftLength: 1000 },
      { draftLength: 0 },
      { visualTokens: { keep: 7 } },
      { joint: { ctcWeight: 70 } },
      { relaxed: { topK: 0, minRatio: 2 } },
    ];
    for (const decoding of outOfRange) {
      const r = await client.query(CREATE, { input: { base64: 'aGk=', decoding } });
      assert.deepEqual(codes(r), ['INVALID_DECODING'], JSON.stringify(decoding));
    }
    // Other values out of their bounds are still BAD_USER_INPUT.
    const longName = await client.query(CREATE, { input: { base64: 'aGk=', fileName: 'x'.repeat(300) } });
    assert.deepEqual(codes(longName), ['BAD_USER_INPUT']);
  });

  it('a multipart request without the CSRF header is refused, 403, with a coded GraphQL error', async () => {
    const r = await client.upload(
      CREATE,
      { input: { file: null } },
      ['input', 'file'],
      new Uint8Array(8),
      'a.png',
      false,
    );
    assert.equal(r.status, 403);
    assert.deepEqual(codes(r), ['CSRF_HEADER_REQUIRED']);
    assert.match(r.errors?.[0].message ?? '', /x-graphql-yoga-csrf/);
  });

  it('a WebSocket message over the limit closes the socket with 1009, its reason saying it is too large', async () => {
    const ws = createClient({
      url: `${base.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: 'Bearer k1' },
      retryAttempts: 0,
      lazy: true,
    });
    const closed = await new Promise<{ code?: number; reason?: string }>((resolve) => {
      ws.subscribe(
        { query: CREATE, variables: { input: { base64: 'A'.repeat(3_000_000) } } },
        {
          next: () => undefined,
          error: (e) => resolve(e as { code: number; reason: string }),
          complete: () => resolve({}),
        },
      );
    });
    await ws.dispose();
    assert.equal(closed.code, 1009);
    assert.match(closed.reason ?? '', /payload too large/i);
  });
});
