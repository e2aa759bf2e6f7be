/**
 * Bundle the compiled CLI (dist/src) into dist/bundle with esbuild, for start-up time: Node 20 loading some 800
 * ES module files one at a time (resolving, stat-ing, reading and compiling each) was most of `npm start`'s second
 * and a half on the 2-core AMD host. Every launcher (bin/specula.js, npm start, the images) runs
 * dist/bundle/main.js; tests import dist/src, which holds the same code unbundled.
 *
 * The two worker threads are entries of their own, beside main.js, so `new URL('./vision-worker.js',
 * import.meta.url)` finds them from the bundle as it does from dist/src. Code split: what only some commands or
 * settings need (the eval suite, Redis and BullMQ, GraphiQL) stays in chunks loaded when first used.
 *
 *   node infra/bundle.mjs        (part of `npm run build`)
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true });

await build({
  absWorkingDir: root,
  entryPoints: {
    main: 'dist/src/cli/main.js',
    'vision-worker': 'dist/src/engine/vision/vision-worker.js',
    'layout-worker': 'dist/src/document/layout/layout-worker.js',
    // The GPU bench, so that bench/gpu.sh carries this folder and the external modules alone.
    'gpu-bench': 'dist/bench/gpu.bench.js',
  },
  outdir,
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // Left to Node's own loading: native addons and WebAssembly that find their files beside their own modules
  // (onnxruntime-node, sharp, mupdf), packages that start threads or child processes from their own files (piscina,
  // pino's transports, BullMQ's sandboxed processors) and ioredis with BullMQ, and the optional @sentry/node.
  external: ['onnxruntime-node', 'sharp', 'mupdf', 'piscina', 'pino', 'bullmq', 'ioredis', '@sentry/node'],
  // CommonJS packages bundled into ES modules still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __specula_require } from 'node:module'; const require = __specula_require(import.meta.url);" },
  // Whitespace and syntax minified, identifiers not (stack traces keep their function names, at columns of long
  // lines): the server's start chunk 2.0 MB to 1.3 MB, read, decoded and parsed on the start's critical path; the
  // server ready in 700 ms against 727 (medians of ten starts, in turn, on the 2-core Zen 5 host).
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
