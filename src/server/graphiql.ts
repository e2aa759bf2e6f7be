/**
 * GraphiQL (@graphql-yoga/render-graphiql) in pieces: a page of a few kilobytes at /graphql, and its script,
 * stylesheet and editor workers as files under /graphiql/ that the browser keeps (they change only with the
 * package), where render-graphiql's own page inlines all 9 MB of them into every load. Nothing from a CDN.
 */
import type { ServerResponse } from 'node:http';
import {
  css,
  editorWorkerService,
  favicon,
  graphqlWorker,
  js,
  jsonWorker,
} from '@graphql-yoga/render-graphiql/graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';

const BASE = '/graphiql/';
const JS = 'text/javascript; charset=utf-8';
const ASSETS: Record<string, { body: string | Buffer; type: string }> = {
  'graphiql.js': { body: js, type: JS },
  'graphiql.css': { body: css, type: 'text/css; charset=utf-8' },
  'editor.worker.js': { body: editorWorkerService, type: JS },
  'json.worker.js': { body: jsonWorker, type: JS },
  'graphql.worker.js': { body: graphqlWorker, type: JS },
  'favicon.ico': { body: Buffer.from(favicon.slice(favicon.indexOf(',') + 1), 'base64'), type: 'image/x-icon' },
};
// The assets' names carry no hash: a changed package is picked up when a week's cache runs out, or on a reload.
const CACHE = 'public, max-age=604800';

/** JSON safe inside a <script> element. */
const scriptJson = (v: unknown): string => JSON.stringify(v).replace(/</g, '\\u003c');

/** GraphiQL's page: its options inline, everything else fetched from /graphiql/. */
export function renderGraphiQL(opts: GraphiQLOptions = {}): string {
  const workers = { editorWorkerService: 'editor.worker.js', json: 'json.worker.js', graphql: 'graphql.worker.js' };
  const title = String(opts.title ?? 'GraphiQL').replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <link rel="icon" href="${BASE}favicon.ico" />
    <link rel="stylesheet" href="${BASE}graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${scriptJson(workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_id, label) => '${BASE}' + workers[label] };
    </script>
    <script src="${BASE}graphiql.js"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(opts)});
    </script>
  </body>
</html>
`;
}

/** Serve one of GraphiQL's assets; false when the path is not one. */
export function serveGraphiQLAsset(path: string, res: ServerResponse): boolean {
  const asset = path.startsWith(BASE) ? ASSETS[path.slice(BASE.length)] : undefined;
  if (!asset) return false;
  res.writeHead(200, { 'content-type': asset.type, 'cache-control': CACHE, 'x-content-type-options': 'nosniff' });
  res.end(asset.body);
  return true;
}

export interface GraphiQLPages {
  render: (opts?: GraphiQLOptions) => string;
  serveAsset: (path: string, res: ServerResponse) => boolean;
}

export const graphiqlPages: GraphiQLPages = { render: renderGraphiQL, serveAsset: serveGraphiQLAsset };
