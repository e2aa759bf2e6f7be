// A small Specula client: upload a document, then print its tokens as they are decoded (graphql-ws),
// drafted tokens in green, then the markdown.
//
//   SPECULA_URL=http://localhost:4000 SPECULA_KEY=... node examples/client.mjs examples/sample-page.png [drafter]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const base = process.env.SPECULA_URL ?? 'http://localhost:4000';
const key = process.env.SPECULA_KEY;
const [file = 'examples/sample-page.png', drafter = 'ctc'] = process.argv.slice(2);
const auth = key ? { authorization: `Bearer ${key}` } : {};

// 1. Upload (GraphQL multipart request). The CSRF header tells the server this is not a browser form post.
const form = new FormData();
form.set('operations', JSON.stringify({
  query: 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }',
  variables: { input: { file: null, decoding: { drafter } } },
}));
form.set('map', JSON.stringify({ 0: ['variables.input.file'] }));
form.set('0', new Blob([readFileSync(file)]), basename(file));
const created = await (await fetch(`${base}/graphql`, { method: 'POST', headers: { ...auth, 'x-graphql-yoga-csrf': '1' }, body: form })).json();
if (created.errors) throw new Error(JSON.stringify(created.errors));
const id = created.data.createParseJob.id;
console.error(`job ${id}`);

// 2. Follow the job's events. Lines decode side by side, so each token delta says which page and line it is.
const client = createClient({ url: `${base.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: auth });
const lines = new Map();
await new Promise((resolve, reject) => {
  client.subscribe({
    query: `subscription($id: ID!) { parseJobEvents(id: $id) {
      __typename
      ... on TokenDelta { page line text fromDraft }
      ... on JobDone { metrics { tokensPerForward forwards } job { markdown } }
      ... on JobFailed { code message }
    } }`,
    variables: { id },
  }, {
    next: ({ data, errors }) => {
      if (errors) return reject(new Error(JSON.stringify(errors)));
      const e = data.parseJobEvents;
      if (e.__typename === 'TokenDelta') {
        const colored = [...e.text].map((ch, i) => (e.fromDraft[i] ? `\x1b[32m${ch}\x1b[0m` : ch)).join('');
        lines.set(`${e.page}:${e.line}`, (lines.get(`${e.page}:${e.line}`) ?? '') + e.text);
        process.stderr.write(colored);
      } else if (e.__typename === 'JobDone') {
        console.error(`\n\n${e.metrics.tokensPerForward.toFixed(2)} tokens per forward, ${e.metrics.forwards} forwards\n`);
        console.log(e.job.markdown);
      } else if (e.__typename === 'JobFailed') {
        reject(new Error(`${e.code}: ${e.message}`));
      }
    },
    error: reject,
    complete: resolve,
  });
});
await client.dispose();
