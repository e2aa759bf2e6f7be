#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --initial-old-space-size=64
// --initial-old-space-size: see src/cli/heap-floor.ts; MALLOC_ARENA_MAX: src/cli/malloc-arenas.ts (why, and every
// launcher that passes them).
// The CLI lives in TypeScript; `npm install` (its prepare step) compiles it to dist/ and bundles it into
// dist/bundle (infra/bundle.mjs says why).
import('../dist/bundle/main.js').catch((e) => {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist/bundle/main.js')) {
    console.error('specula: dist/ is missing; run `npm install` (or `npm run build`) in the checkout first');
    process.exit(1);
  }
  throw e;
});
