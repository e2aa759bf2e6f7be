/**
 * The glibc setting every Specula process starts with, beside the V8 flag in heap-floor.ts and through the same
 * launchers (bin/specula.js's shebang, `npm start` and `npm run eval`, the container images, the processes the tests
 * and benchmarks spawn).
 *
 * A reading runs many allocating threads, and glibc's per-thread arenas keep what one thread freed from the others;
 * two arenas let it be reused without the lock waits of one (docs/benchmarks.md, CHANGELOG). glibc reads it once,
 * at start, so each launcher sets it; other C libraries (musl) ignore it.
 */
export const MALLOC_ARENAS_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/**
 * What the server's launchers add (`npm start`, the container images): transparent huge pages for malloc's large
 * blocks, because a start-up faults in the model's weights page by page and huge pages make that much faster. They
 * hold more memory, which is why the CLI's shebang leaves them out. It replaces a GLIBC_TUNABLES the caller set.
 */
export const SERVER_MALLOC_ENV = { ...MALLOC_ARENAS_ENV, GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' } as const;
