import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getIntrospectionQuery } from 'graphql';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { ApiClient, codes } from './helpers/api-client.js';

describe('server settings: GraphiQL when asked, introspection switchable off', () => {
  let server: RunningServer;
  let base: string;
  before(async () => {
    server = await startServer(configFromEnv({
      PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'acme:k1', SPECULA_GRAPHIQL: '1', SPECULA_INTROSPECTION: '0', LOG_LEVEL: 'silent',
    }));
    base = `http://127.0.0.1:${server.port}`;
  });
  after(() => server?.close());

  it('SPECULA_GRAPHIQL=1 serves GraphiQL to a browser, its assets inlined, nothing from a CDN', async () => {
    const res = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const html = await res.text();
    assert.match(html, /graphiql/i);
    assert.ok(html.length > 1_000_000, 'the bundle is in the page');
    assert.doesNotMatch(html, /<script[^>]+src="https?:\/\//, 'no script from another host');
    assert.doesNotMatch(html, /<link[^>]+href="https?:\/\//, 'no stylesheet from another host');
  });

  it('SPECULA_INTROSPECTION=0 refuses introspection; ordinary queries still run', async () => {
    const client = new ApiClient(base, 'k1');
    const r = await client.query(getIntrospectionQuery());
    assert.ok(r.errors?.length, 'refused');
    assert.match(r.errors?.[0].message ?? '', /introspection/i);
    const ok = await client.query('{ engine { stats { forwards } } }');
    assert.equal(ok.errors, undefined);
    assert.deepEqual(codes(await new ApiClient(base).query('{ __typename }')), ['UNAUTHENTICATED']);
  });
});
