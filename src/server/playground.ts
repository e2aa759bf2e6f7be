/**
 * The playground page's files: its HTML and CSS (src/playground), its scripts (compiled by `tsc -p
 * src/playground`), and marked, which renders the markdown, from node_modules. Only these files are served;
 * nothing is fetched from elsewhere at run time.
 */
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';

const require = createRequire(import.meta.url);

const FILES: Record<string, { path: () => string; type: string }> = {
  '/playground/': {
    path: () => join(PACKAGE_ROOT, 'src', 'playground', 'index.html'),
    type: 'text/html; charset=utf-8',
  },
  '/playground/playground.css': {
    path: () => join(PACKAGE_ROOT, 'src', 'playground', 'playground.css'),
    type: 'text/css; charset=utf-8',
  },
  '/playground/playground.js': {
    path: () => join(PACKAGE_ROOT, 'dist', 'playground', 'playground.js'),
    type: 'text/javascript; charset=utf-8',
  },
  '/playground/api.js': {
    path: () => join(PACKAGE_ROOT, 'dist', 'playground', 'api.js'),
    type: 'text/javascript; charset=utf-8',
  },
  '/playground/vendor/marked.js': {
    path: () => join(dirname(require.resolve('marked')), 'marked.esm.js'),
    type: 'text/javascript; charset=utf-8',
  },
};

/** Serve a playground file; false when the path is not one. */
export function servePlayground(path: string, res: ServerResponse): boolean {
  if (path === '/' || path === '/playground') {
    res.writeHead(302, { location: '/playground/' });
    res.end();
    return true;
  }
  if (path === '/favicon.ico') {
    res.writeHead(204);
    res.end();
    return true;
  }
  const file = FILES[path];
  if (!file) return false;
  readFile(file.path()).then(
    (body) => {
      res.writeHead(200, {
        'content-type': file.type,
        'cache-control': 'no-cache',
        // The page talks to this origin only, runs only its own scripts, and shows page images from blob: URLs.
        'content-security-policy':
          "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self'",
        'x-content-type-options': 'nosniff',
      });
      res.end(body);
    },
    () => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not built: run `npm run build`');
    },
  );
  return true;
}
