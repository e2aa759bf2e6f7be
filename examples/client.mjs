// A small Specula client: upload a document, then show its lines as their tokens are decoded (graphql-ws),
// drafted tokens in green, each line in its place (lines decode side by side, so deltas of different lines
// arrive interleaved), then the markdown.
//
//   SPECULA_URL=http://localhost:4000 SPECULA_KEY=... node examples/client.mjs examples/sample-page.png [drafter]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const base = process.env.SPECULA_URL ?? 'http://localhost:4000';
const key = process.env.SPECULA_KEY;
const [file = 'examples/sample-page.png', name = 'ctc'] = process.argv.slice(2);
const drafter = name.toUpperCase().replace(/-/g, '_'); // the API's enum value (ctc: CTC, dual-diffusion: DUAL_DIFFUSION)
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
const lines = new Map(); // "page:line" -> the line so far, drafted characters coloured
const live = process.stderr.isTTY;
let shown = 0;
const order = (a, b) => { const [pa, la] = a.split(':').map(Number); const [pb, lb] = b.split(':').map(Number); return pa - pb || la - lb; };
/** Redraw every line in reading order over the previous drawing (a terminal), or print a finished page's lines. */
function draw(keys) {
  const text = keys.sort(order).map((k) => lines.get(k));
  if (live) process.stderr.write(`${shown ? `\x1b[${shown}A` : ''}\x1b[J${text.join('\n')}\n`);
  else process.stderr.write(`${text.join('\n')}\n`);
  if (live) shown = text.length;
}
await new Promise((resolve, reject) => {
  client.subscribe({
    query: `subscription($id: ID!) { parseJobEvents(id: $id) {
      __typename
      ... on TokenDelta { page line text fromDraft }
      ... on PageDone { page }
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
        const k = `${e.page}:${e.line}`;
        lines.set(k, (lines.get(k) ?? '') + colored);
        if (live) draw([...lines.keys()].filter((x) => x.startsWith(`${e.page}:`)));
      } else if (e.__typename === 'PageDone') {
        if (!live) draw([...lines.keys()].filter((x) => x.startsWith(`${e.page}:`)));
        shown = 0; // the next page draws below this one
      } else if (e.__typename === 'JobDone') {
        console.error(`\n${e.metrics.tokensPerForward.toFixed(2)} tokens per forward, ${e.metrics.forwards} forwards\n`);
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
