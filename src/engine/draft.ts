/**
 * The one small record between drafters and verifiers (vLLM's spec-decode metadata, per sequence).
 *
 * A drafter proposes a Draft for each sequence; the scheduler feeds [last committed token, ...draft] through
 * one decoder forward; a verifier reads the logits and returns a Verdict: which draft tokens to keep and the
 * token it commits itself after them (the bonus), so every forward commits at least one token.
 */

export interface Draft {
  /** Proposed token ids. */
  tokens: number[];
  /**
   * For a tree: parents[i] is the index in `tokens` of token i's parent, or -1 when token i directly follows
   * the last committed token. Parents come before children. Absent for a chain (token i follows token i-1).
   */
  parents?: number[];
}

export interface Verdict {
  /** Indices into draft.tokens of the accepted tokens, in order: a path from the root. */
  accepted: number[];
  /** The verifier's own next token after the accepted ones. */
  bonus: number;
}

/** Logits of one sequence's row: at(0) follows the last committed token, at(i + 1) follows draft token i. */
export interface RowLogits {
  at(i: number): Float32Array;
}

export function parentsOf(d: Draft): number[] {
  return d.parents ?? d.tokens.map((_, i) => i - 1);
}

/** Depth of each draft token below the last committed token (1 for its children). */
export function depths(d: Draft): number[] {
  const parents = parentsOf(d);
  const out: number[] = [];
  parents.forEach((p, i) => out.push(p < 0 ? 1 : out[p] + 1));
  return out;
}

/** Is draft token j an ancestor of (or equal to) draft token i? */
export function isAncestor(parents: readonly number[], j: number, i: number): boolean {
  for (let k = i; k >= 0; k = parents[k]) if (k === j) return true;
  return false;
}

export function argmax(x: Float32Array): number {
  let best = 0;
  for (let c = 1; c < x.length; c++) if (x[c] > x[best]) best = c;
  return best;
}
