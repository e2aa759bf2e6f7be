/** How many intra-op threads a bundle's sessions open with: the decoder's default, the vision worker's, the bound. */
import { availableParallelism } from 'node:os';
import { EngineError } from '../errors.js';

/**
 * Threads past this many per core only queue behind each other (and 100,000 of them held a host at load 317 for
 * minutes): a count above it is refused, not run.
 */
const THREADS_PER_CORE = 4;

/** A thread count the sessions can be opened with: a whole number from 1 to THREADS_PER_CORE a core. */
export function checkThreads(threads: number, cores: number = availableParallelism()): void {
  const most = THREADS_PER_CORE * cores;
  if (!Number.isInteger(threads) || threads < 1 || threads > most) {
    throw new EngineError(
      'INVALID_OPTIONS',
      `threads must be a whole number from 1 to ${most} (${THREADS_PER_CORE} ` +
        `a core, ${cores} cores here), got ${threads}`,
    );
  }
}

/**
 * The decoder's intra-op threads when the caller does not say: half the cores, because the vision worker, the
 * layout thread and the main thread keep the other half busy (docs/benchmarks.md has the paired runs).
 */
export function decoderThreads(cores: number = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / 2));
}

/**
 * The vision worker's intra-op threads beside the decoder's `threads`: half of them, rounded up, because on the
 * CPU the two run at once on the same cores and a vision pass on fewer threads spends less CPU per column.
 */
export function visionThreads(threads: number): number {
  return Math.max(1, Math.ceil(threads / 2));
}
