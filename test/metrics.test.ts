/**
 * /metrics as an operator scrapes it, over real HTTP with the real engine: a bounded set of series whatever the
 * requests carry (Host header, query string, aliases), only the documented GraphQL series, the latency of jobs
 * and pages, and the settings that keep the endpoint off the public port or behind a key.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { ApiClient } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }';
const sample = readFileSync(SAMPLE_PAGE);

/** A GraphQL POST over node:http, which sends the Host header it is given (fetch sets its own). */
function post(port: number, path: string, host: string, query: string, key?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query });
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          host,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Each sample's name and labels, without its value: what a Prometheus server stores a series for. */
const seriesOf = (text: string, prefix: string): Set<string> =>
  new Set(
    text
      .split('\n')
      .filter((l) => l.startsWith(prefix))
      .map((l) => l.replace(/ \S+$/, '')),
  );

describe('/metrics', () => {
  let server: RunningServer;
  let base: string;
  let client: ApiClient;
  before(async () => {
    server = await startServer(
      configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'acme:k1', LOG_LEVEL: 'silent' }),
    );
    base = `http://127.0.0.1:${server.port}`;
    client = new ApiClient(base, 'k1');
  });
  after(() => server?.close());

  const scrape = async (): Promise<string> => {
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    return res.text();
  };

  it('keeps the same series whatever Host header, query string and aliases the requests carry', async () => {
    // Half with a key, half without (an error at a path the client's alias names), each from another "host".
    const burst = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        const status = await post(
          server.port,
          `/graphql?cache-buster=${i}`,
          `tenant-${i}.example:${1000 + i}`,
          `{ alias${i}: engine { models { name } } }`,
          i % 2 ? 'k1' : undefined,
        );
        assert.ok(status === 200 || status === 401, `status ${status}`);
      }
    };
    await burst(0, 10);
    const first = await scrape();
    await burst(10, 210);
    const then = await scrape();
    assert.doesNotMatch(then, /tenant-\d+\.example|cache-buster|alias\d+/, 'no client-chosen text in any label');
    assert.deepEqual(seriesOf(then, 'graphql_'), seriesOf(first, 'graphql_'), '200 more requests, no new series');
    const families = [...then.matchAll(/^# TYPE (graphql_\S+)/gm)].map((m) => m[1]).sort();
    assert.deepEqual(
      families,
      ['graphql_envelop_error_result', 'graphql_envelop_request_duration', 'graphql_yoga_http_duration'],
      'the GraphQL series docs/deploy.md lists, and no others',
    );
  });

  it('times each job from submission to its end, by outcome, and each page read', async () => {
    const meta = await sharp(sample).metadata();
    const strip = await sharp(sample)
      .extract({ left: 0, top: 0, width: meta.width as number, height: Math.round((meta.height as number) * 0.2) })
      .png()
      .toBuffer();
    const ids: string[] = [];
    for (const [bytes, name] of [
      [strip, 'strip.png'],
      [sample.subarray(0, sample.length >> 2), 'broken.png'],
    ] as const) {
      const r = await client.query<{ createParseJob: { id: string } }>(CREATE, {
        input: { base64: Buffer.from(bytes).toString('base64'), fileName: name },
      });
      assert.equal(r.errors, undefined, JSON.stringify(r.errors));
      ids.push((r.data as { createParseJob: { id: string } }).createParseJob.id);
    }
    const statuses = async (): Promise<string[]> =>
      Promise.all(
        ids.map(async (id) => {
          const r = await client.query<{ parseJob: { status: string } }>(
            'query($id: ID!) { parseJob(id: $id) { status } }',
            { id },
          );
          return r.data?.parseJob.status ?? 'UNKNOWN';
        }),
      );
    for (let i = 0; i < 600 && (await statuses()).some((s) => s === 'QUEUED' || s === 'RUNNING'); i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await statuses(), ['SUCCEEDED', 'FAILED']);
    // The worker observes a job once it has recorded its end: wait for the hook that follows.
    let text = '';
    for (let i = 0; i < 50; i++) {
      text = await scrape();
      if (/^specula_job_seconds_count\{outcome="failed"\} 1$/m.test(text)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(text, /^specula_job_seconds_count\{outcome="succeeded"\} 1$/m);
    assert.match(text, /^specula_job_seconds_count\{outcome="failed"\} 1$/m);
    assert.match(text, /^specula_job_seconds_bucket\{le="\+Inf",outcome="succeeded"\} 1$/m);
    assert.match(text, /^specula_page_seconds_count 1$/m, 'the strip is one page; the broken file has none');
  });

  it(
    'SPECULA_METRICS_PORT serves /metrics on a port of its own, not the public one; ' +
      'SPECULA_METRICS_KEY asks a scraper for the key',
    async () => {
      const apart = await startServer(
        configFromEnv({
          PORT: '0',
          HOST: '127.0.0.1',
          SPECULA_API_KEYS: 'acme:k1',
          SPECULA_METRICS_PORT: '0',
          SPECULA_METRICS_KEY: 'scrape-secret',
          LOG_LEVEL: 'silent',
        }),
        { engine: server.engine ?? undefined },
      );
      try {
        const pub = `http://127.0.0.1:${apart.port}`;
        assert.equal((await fetch(`${pub}/metrics`)).status, 404, 'not on the public port');
        assert.equal((await fetch(`${pub}/healthz`)).status, 200);
        const port = apart.metricsPort;
        assert.equal(typeof port, 'number');
        const own = `http://127.0.0.1:${port}`;
        assert.equal((await fetch(`${own}/metrics`)).status, 401, 'no key');
        const wrong = await fetch(`${own}/metrics`, { headers: { authorization: 'Bearer k1' } });
        assert.equal(wrong.status, 401, 'an API key is not the metrics key');
        const ok = await fetch(`${own}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
        assert.equal(ok.status, 200);
        assert.match(await ok.text(), /^specula_process_cpu_seconds_total /m);
        assert.equal((await fetch(`${own}/graphql`)).status, 404, 'the metrics port serves nothing else');
      } finally {
        await apart.close();
      }
    },
  );
});
