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

/**
 * What the server's launchers add (`npm start`, the container images): glibc's malloc asks the kernel for
 * transparent huge pages (madvise) for its large blocks. A start-up faults in the model's weights and onnxruntime's
 * prepacked copies of them page by page, and on the 2-core Zen 5 host a fault is slow (a fresh 7.7 MB buffer: 22 ms):
 * with huge pages, 512 times fewer. The decoder's session was built in 34-50 ms against 82-85, the server was ready
 * in 670 ms against 748 and 611 against 663 (medians of ten starts, in turn), `npm start` in 847 against 914 (five).
 * It costs memory, a huge page being held whole: after one job the server sat at 325 MB against 295, a bench:load
 * worker peaked at 570-595 MB against 555-567 at the same pages/s, and the CLI over six docbank pages ~13 MB higher at
 * the same speed, which is why the CLI's shebang leaves it out. glibc before 2.35, and kernels with transparent huge
 * pages off or always on, ignore it. It replaces a GLIBC_TUNABLES the caller set.
 */
export const SERVER_MALLOC_ENV = { ...MALLOC_ARENAS_ENV, GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' } as const;
