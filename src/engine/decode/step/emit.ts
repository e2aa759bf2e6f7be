/**
 * What a step shows the world, once every row is committed: each line's new tokens to its caller, finished lines
 * resolved, the forward counted in each request's metrics and shown to the observers.
 */
import type { SpecMetrics } from '../metrics.js';
import type { Sequence } from '../sequence.js';
import type { StepRecord } from './record.js';

/** One decoder forward, as observers (metrics exporters) see it. */
export interface ForwardObservation {
  ms: number;
  /** Lines in the batch, and the tokens fed per line (1 + the longest draft). */
  rows: number;
  width: number;
  /** Tokens committed across the batch by this forward. */
  committed: number;
}

export function emit(
  rec: StepRecord,
  finish: (s: Sequence, error?: unknown) => void,
  observers: Iterable<(o: ForwardObservation) => void>,
): void {
  const touched = new Set<SpecMetrics>();
  rec.seqs.forEach((s, r) => {
    const c = rec.commits[r];
    if (!c) return;
    touched.add(s.p.task.metrics);
    if (c.fresh.length && s.p.task.onTokens) {
      try {
        s.p.task.onTokens(c.fresh, c.fromDraft, c.drafted);
      } catch (e) {
        // A caller's callback that throws ends its own line, not the batch.
        finish(s, e);
        return;
      }
    }
    if (c.finished) finish(s);
  });
  for (const m of touched) m.forward(rec.forwardMs);
  for (const o of observers) {
    try {
      o({ ms: rec.forwardMs, rows: rec.live, width: rec.width, committed: rec.committed });
    } catch {
      // metrics must never break decoding
    }
  }
}
