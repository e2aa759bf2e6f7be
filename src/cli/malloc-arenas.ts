/**
 * The glibc setting every Specula process starts with, beside the V8 flag in heap-floor.ts and through the same
 * launchers (bin/specula.js's shebang, `npm start` and `npm run eval`, the container images, the processes the tests
 * and benchmarks spawn).
 *
 * glibc gives each thread that allocates its own malloc arena, up to eight per core, and an arena keeps what was
 * freed in it for its own thread. A reading runs many such threads (onnxruntime's, the vision and layout workers,
 * libuv's pool, libvips', V8's helpers), so memory freed on one thread was not reused by another and stayed in the
 * process. Capped at two arenas: `specula parse` over six docbank pages peaked at 637 MB instead of 720 (medians of
 * five paired runs, the same wall and CPU time), and under `npm run bench:load` (50 jobs, two workers) the workers
 * at 714/692 and 749/733 MB instead of 861/813 and 769/772. One arena saved another 80 MB and cost 4.5% of the wall
 * time (threads waiting on its lock). glibc reads it once, when the process starts, so each launcher sets it; other
 * C libraries (musl) ignore it.
 */
export const MALLOC_ARENAS_ENV = { MALLOC_ARENA_MAX: '2' } as const;
