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
  /**
   * Diffusion: this many mask positions follow each leaf of the draft (or the fed token, for an empty draft)
   * in the same forward. Each block sees the path to its leaf and itself; nothing sees it. The model fills the
   * block with the tokens after that leaf's bonus, and the drafter reads them back (ForwardView) as its next
   * draft: verification and the next draft share one forward.
   */
  lookahead?: number;
  /**
   * Also this many masks (at most `lookahead`) after every draft token that is not a leaf: whichever token the
   * verifier rejects, a block saw exactly the kept text, so the next draft starts at a block's most reliable
   * slot. Shorter than `lookahead` to keep the forward narrow: a block's later slots are rarely right.
   */
  lookaheadInner?: number;
  /**
   * Where each token was read from: a visual column of the line (the CTC drafter's tokens come with the frame the
   * CTC head emitted them at). Focal pruning looks there for the position that verifies each token; a draft without
   * columns gets them estimated from where the decoder is reading and the line's mean character width.
   */
  columns?: number[];
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

/** Softmax probability of `token` under these logits. */
export function probability(logits: Float32Array, token: number): number {
  return Math.exp(logits[token] - logSumExp(logits));
}

/** log sum_c e^x[c]: the log-softmax's normaliser. */
export function logSumExp(x: Float32Array): number {
  const n = x.length;
  let max = -Infinity;
  for (let c = 0; c < n; c++) if (x[c] > max) max = x[c];
  let sum = 0;
  for (let c = 0; c < n; c++) sum += Math.exp(x[c] - max);
  return max + Math.log(sum);
}

export function argmax(x: Float32Array): number {
  let best = 0;
  for (let c = 1; c < x.length; c++) if (x[c] > x[best]) best = c;
  return best;
}

/** What one forward computed for a row, for drafters that read it back (diffusion). */
export interface ForwardView {
  /** Logits after the fed token (node -1) or after draft token `node`: the model's next token there. */
  after(node: number): Float32Array;
  /**
   * Logits of the mask block after draft token `node` (-1: the fed token), in position order; [] where the
   * forward had none (only leaves and the fed token carry one unless the draft asked for lookaheadInner).
   */
  lookahead(node: number): Float32Array[];
}

/** Draft tokens no other draft token follows (a chain has one: its last). */
export function leavesOf(d: Draft): number[] {
  const parents = parentsOf(d);
  const hasChild = new Array<boolean>(d.tokens.length).fill(false);
  for (const p of parents) if (p >= 0) hasChild[p] = true;
  return d.tokens.map((_, i) => i).filter((i) => !hasChild[i]);
}
