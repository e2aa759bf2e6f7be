/**
 * The V8 flag every Specula process starts with (bin/specula.js's shebang, `npm start`, `npm run eval`, the
 * container images' entrypoint, and the processes the tests and benchmarks spawn).
 *
 * V8 counts array buffers towards the old generation's limit, and onnxruntime-node returns every output in a fresh
 * one, so a small heap's default limit made full collections run far too often; a 64 MB floor spaces them out
 * (docs/benchmarks.md). A heap is configured when the process starts, so each launcher passes it.
 */
export const HEAP_FLOOR_FLAG = '--initial-old-space-size=64';
