/** The scheduler's options, and what they size: when idle buffers are let go, how much the buffer pool may hold. */
import type { Bundle } from '../bundle/bundle.js';

export interface SchedulerOptions {
  /** Most lines decoded in one forward; may be changed between reads. */
  maxBatch: number;
  /** After this long with nothing to read, the recycled buffers are let go (default IDLE_RELEASE_MS). */
  idleReleaseMs?: number;
  /**
   * Called once they are let go: a server passes V8's gc(), since an ArrayBuffer's memory returns only when the
   * GC collects it, and a quiet process's small heap gives V8 no reason to.
   */
  collect?: () => void;
}

/**
 * An engine idle this long lets its recycled buffers go, so that a server at rest does not hold a page's worth of
 * state; long enough that the gap between one page or job and the next keeps them.
 */
export const IDLE_RELEASE_MS = 2000;

/**
 * What the buffer pool may hold: two full batches' state at the widest lines and longest texts (visual K and V,
 * the CTC head's log-probabilities, the text cache's K and V), at most 128 MiB, sized for the batch the engine
 * opens with. Two, because a rebuild makes the batch's state anew while the old one is still read.
 */
export function poolBytes(bundle: Bundle, maxBatch: number): number {
  const { nLayers, nHeads, headDim, vocabSize, maxText } = bundle.config.dims;
  const { maxWidth, visualStride } = bundle.config.image;
  const rows = Math.max(1, maxBatch);
  const visual = Math.ceil(maxWidth / visualStride);
  const perToken = nLayers * nHeads * headDim * 4 * 2;
  const state = rows * (visual * perToken + visual * vocabSize * 4 + maxText * perToken);
  return Math.min(128 * 2 ** 20, 2 * state);
}
