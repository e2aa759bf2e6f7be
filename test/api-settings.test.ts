import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { getIntrospectionQuery } from 'graphql';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { ApiClient, codes } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

/** n bytes that begin as a PNG does: accepted at submission (a format is sniffed there), never read here. */
function pngHeaded(n: number): Buffer {
  const bytes = Buffer.alloc(n, 7);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

describe(
  'the server settings and its shutdown: GraphiQL when asked, ' +
    'introspection switchable off, one upload limit, SSE ended cleanly',
  () => {
    let server: RunningServer;
    let base: string;
    before(async () => {
      server = await startServer(
        configFromEnv({
          PORT: '0',
          HOST: '127.0.0.1',
          SPECULA_API_KEYS: 'acme:k1',
          SPECULA_GRAPHIQL: '1',
          SPECULA_INTROSPECTION: '0',
          SPECULA_MAX_DEPTH: '5',
          LOG_LEVEL: 'silent',
        }),
      );
      base = `http://127.0.0.1:${server.port}`;
    });
    after(() => server?.close());

    it('SPECULA_GRAPHIQL=1 serves GraphiQL: a small page, its assets as cached files, nothing from a CDN', async () => {
      const res = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const html = await res.text();
      assert.match(html, /graphiql/i);
      assert.ok(html.length < 10_000, `the page is ${html.length} bytes, its bundle apart`);
      assert.doesNotMatch(html, /<script[^>]+src="https?:\/\//, 'no script from another host');
      assert.doesNotMatch(html, /<link[^>]+href="https?:\/\//, 'no stylesheet from another host');
      assert.match(html, /authorization.{1,8}Bearer/, 'a key is asked for: its header is pre-filled');
      const assets = [...html.matchAll(/(?:src|href)="(\/graphiql\/[^"]+)"/g)].map((m) => m[1]);
      assert.ok(assets.includes('/graphiql/graphiql.js') && assets.includes('/graphiql/graphiql.css'), String(assets));
      for (const path of [
        ...assets,
        '/graphiql/editor.worker.js',
        '/graphiql/json.worker.js',
        '/graphiql/graphql.worker.js',
      ]) {
        const asset = await fetch(base + path);
        assert.equal(asset.status, 200, path);
        assert.match(asset.headers.get('cache-control') ?? '', /max-age=\d{4,}/, `${path} is cached`);
        assert.ok((await asset.arrayBuffer()).byteLength > 1000, path);
      }
    });

    it('keyless (SPECULA_ALLOW_ANONYMOUS=1), GraphiQL pre-fills no authorization header', async () => {
      const keyless = await startServer(
        configFromEnv({
          PORT: '0',
          HOST: '127.0.0.1',
          SPECULA_ALLOW_ANONYMOUS: '1',
          SPECULA_GRAPHIQL: '1',
          LOG_LEVEL: 'silent',
        }),
      );
      try {
        const res = await fetch(`http://127.0.0.1:${keyless.port}/graphql`, { headers: { accept: 'text/html' } });
        assert.equal(res.status, 200);
        const html = await res.text();
        assert.match(html, /renderYogaGraphiQL/);
        assert.ok(!html.includes('Bearer'), 'no placeholder key: it would make every request UNAUTHENTICATED');
      } finally {
        await keyless.close();
      }
    });

    it(
      'one upload limit (SPECULA_MAX_UPLOAD_BYTES, 25 MiB here) and one ' +
        'code, UPLOAD_TOO_LARGE, on every transport',
      async () => {
        const client = new ApiClient(base, 'k1');
        const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }';
        // 26,000,000 bytes: over yoga's default 25,000,000-byte body limit, under 25 MiB.
        const under = pngHeaded(26_000_000);
        const up = await client.upload<{ createParseJob: { id: string } }>(
          CREATE,
          { input: { file: null } },
          ['input', 'file'],
          under,
          'under.png',
        );
        assert.equal(up.errors, undefined, JSON.stringify(up.errors));
        const b64 = await client.query(CREATE, { input: { base64: pngHeaded(20_000_000).toString('base64') } });
        assert.equal(b64.errors, undefined, 'base64 of 20 MB (26.7 MB of JSON) is within the limit');
        const over = new Uint8Array(30 * 1024 * 1024);
        const declared = await client.upload(CREATE, { input: { file: null } }, ['input', 'file'], over, 'over.png');
        assert.equal(declared.status, 413);
        assert.deepEqual(codes(declared), ['UPLOAD_TOO_LARGE']);
        // The same upload streamed with no Content-Length (chunked): refused while it streams, with the same code.
        const form = new FormData();
        form.set('operations', JSON.stringify({ query: CREATE, variables: { input: { file: null } } }));
        form.set('map', JSON.stringify({ 0: ['variables.input.file'] }));
        form.set('0', new Blob([over]), 'over.png');
        const packed = new Response(form);
        const streamed = await fetch(`${base}/graphql`, {
          method: 'POST',
          headers: {
            authorization: 'Bearer k1',
            'x-graphql-yoga-csrf': '1',
            'content-type': packed.headers.get('content-type') as string,
          },
          body: packed.body,
          duplex: 'half',
        } as RequestInit);
        assert.equal(streamed.status, 413);
        assert.deepEqual(
          ((await streamed.json()) as { errors: { extensions: { code: string } }[] }).errors.map(
            (e) => e.extensions.code,
          ),
          ['UPLOAD_TOO_LARGE'],
        );
        const b64Over = await client.query(CREATE, {
          input: { base64: Buffer.alloc(27 * 1024 * 1024, 7).toString('base64') },
        });
        assert.deepEqual(codes(b64Over), ['UPLOAD_TOO_LARGE']);
      },
    );

    it(
      'a graceful shutdown ends an SSE subscription cleanly (its "complete" ' + 'event), not with a cut socket',
      async () => {
        const own = await startServer(
          configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'acme:k1', LOG_LEVEL: 'silent' }),
        );
        const url = `http://127.0.0.1:${own.port}/graphql`;
        const created = await new ApiClient(`http://127.0.0.1:${own.port}`, 'k1').query<{
          createParseJob: { id: string };
        }>('mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }', {
          input: { base64: readFileSync(SAMPLE_PAGE).toString('base64') },
        });
        const id = created.data?.createParseJob.id as string;
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: 'Bearer k1', 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({
            query: 'subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }',
            variables: { id },
          }),
        });
        assert.equal(res.status, 200);
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        await reader.read(); // the stream is open
        const closing = own.close();
        let text = '';
        for (;;) {
          const { done, value } = await reader.read(); // rejects if the socket is cut
          if (done) break;
          text += Buffer.from(value).toString('utf8');
        }
        await closing;
        assert.match(text, /event: complete/);
      },
    );

    it('SPECULA_INTROSPECTION=0 refuses introspection; ordinary queries still run', async () => {
      const client = new ApiClient(base, 'k1');
      const r = await client.query(getIntrospectionQuery());
      assert.ok(r.errors?.length, 'refused');
      assert.match(r.errors?.[0].message ?? '', /introspection/i);
      const ok = await client.query('{ engine { stats { forwards } } }');
      assert.equal(ok.errors, undefined);
      // SPECULA_MAX_DEPTH (5 here) refuses a deeper query before it runs.
      const tooDeep = await client.query(
        '{ parseJobs { edges { node { pages { blocks { lines { box { x } } } } } } } }',
      );
      assert.deepEqual(codes(tooDeep), ['QUERY_TOO_DEEP']);
      assert.match(tooDeep.errors?.[0].message ?? '', /depth/i);
      assert.deepEqual(codes(await new ApiClient(base).query('{ __typename }')), ['UNAUTHENTICATED']);
    });

    it('with introspection off, no error suggests a field, argument, enum value or type ("Did you mean")', async () => {
      const client = new ApiClient(base, 'k1');
      const CREATE = 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }';
      const misspelt = [
        await client.query('{ engine { statz } }'),
        await client.query('{ parseJobs(frist: 1) { edges { node { id } } } }'),
        await client.query('mutation { createParseJob(input: { base64: "aGk=", decoding: { drafter: CT } }) { id } }'),
        await client.query('query($d: Drafterr) { engine { stats { forwards } } }'),
        await client.query('subscription($id: ID!) { parseJobEvents(id: $id) { seq } }', { id: 'x' }),
        await client.query(CREATE, { input: { base64: 'aGk=', decoding: { drafter: 'CT' } } }),
        await client.query(CREATE, { input: { base64: 'aGk=', decoding: { draftLenght: 3 } } }),
      ];
      for (const r of misspelt) assert.ok(r.errors?.length, 'refused');
      const messages = misspelt.flatMap((r) => (r.errors ?? []).map((e) => e.message));
      assert.deepEqual(
        messages.filter((m) => /Did you mean/.test(m)),
        [],
      );
      // The refusals still say what was wrong, only not what would have been right.
      assert.ok(messages.some((m) => m.includes('"statz"')));
      assert.ok(messages.some((m) => m.includes('"CT"')));
      // Over graphql-ws too.
      const overWs = await client.ws('subscription($id: ID!) { parseJobEvents(id: $id) { seq } }', { id: 'x' }).then(
        () => assert.fail('refused'),
        (e: Error) => e.message,
      );
      assert.match(overWs, /Cannot query field/);
      assert.doesNotMatch(overWs, /Did you mean/);
    });
  },
);
