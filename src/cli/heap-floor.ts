/**
 * The V8 flag every Specula process starts with (bin/specula.js's shebang, `npm start`, `npm run eval`, the
 * container images' entrypoint, and the processes the tests and benchmarks spawn).
 *
 * V8 counts array buffers allocated since the last full collection towards the old generation's limit, and a
 * reading allocates them fast: onnxruntime-node returns every output in a fresh one (the decoder's logits and new
 * K/V, the vision pass's visual K/V handed over from its worker), about 90 MB a docbank page. With V8's default
 * limit for a heap this small (about 12 MB live, 16-24 MB of slack) that made a full collection every 100-150 ms:
 * 125 over the 19 docbank pages. With a 64 MB floor, 57, and the CLI over those pages took 0.89-0.92x the wall time
 * and 0.91x the CPU (paired runs; Node 20, 22 and 24 alike). It cannot be set from inside a running process (its
 * heap is configured when it starts), so each launcher passes it.
 */
export const HEAP_FLOOR_FLAG = '--initial-old-space-size=64';
