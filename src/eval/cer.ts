/** Character error rate as the project scores it: NFKC, whitespace folded, corpus-level. */
import { distance } from 'fastest-levenshtein';

export function normalise(s: string): string {
  return s.normalize('NFKC').replace(/\s+/g, ' ').trim();
}

export interface CerTally {
  edits: number;
  chars: number;
}

/** `foldCase`: for sets whose truth ignores the printed case (SROIE's transcripts are upper-cased). */
export function tally(hyp: string, ref: string, foldCase = false): CerTally {
  const h = foldCase ? normalise(hyp).toUpperCase() : normalise(hyp);
  const r = foldCase ? normalise(ref).toUpperCase() : normalise(ref);
  return { edits: distance(h, r), chars: Math.max(1, r.length) };
}

/** Total edits over total reference characters (not a mean of per-line rates). */
export function corpusCer(t: readonly CerTally[]): number {
  const e = t.reduce((s, x) => s + x.edits, 0);
  const n = t.reduce((s, x) => s + x.chars, 0);
  return n ? e / n : 0;
}
