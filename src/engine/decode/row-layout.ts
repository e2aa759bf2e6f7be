/**
 * A row of one decoder forward: the drafter's proposal kept within its budget, and where its tokens sit (the fed
 * token, the draft, mask blocks), at which text positions, and who attends to whom.
 */
import { depths, type Draft, isAncestor, leavesOf, parentsOf } from '../strategies/draft.js';
import { MAX_DRAFT_LENGTH } from '../strategies/draft-length.js';
import type { PositionRule } from './positions.js';

/** Keep a drafter's proposal within its budget (tree: depth) and well formed. */
export function clip(d: Draft, budget: number, tree: boolean): Draft {
  const lookahead = Math.max(0, Math.min(MAX_DRAFT_LENGTH, Math.floor(d.lookahead ?? 0)));
  const clipped = clipTokens(d, budget, tree);
  if (!lookahead) return clipped;
  const inner = Math.max(0, Math.min(lookahead, Math.floor(d.lookaheadInner ?? 0)));
  return inner ? { ...clipped, lookahead, lookaheadInner: inner } : { ...clipped, lookahead };
}

function clipTokens(d: Draft, budget: number, tree: boolean): Draft {
  if (!d.parents || !tree) {
    // A verifier that takes chains gets a chain: the first root path of a tree.
    if (d.parents && !tree) {
      const chain: number[] = [];
      let node = -1;
      for (let i = 0; i < d.tokens.length; i++) {
        if (d.parents[i] === node) {
          chain.push(d.tokens[i]);
          node = i;
        }
      }
      return { tokens: chain.slice(0, budget) };
    }
    return { tokens: d.tokens.slice(0, budget) };
  }
  const dep = depths(d);
  const keep = d.tokens.map((_, i) => i).filter((i) => dep[i] <= budget && (d.parents as number[])[i] < i);
  const index = new Map(keep.map((old, i) => [old, i]));
  return {
    tokens: keep.map((i) => d.tokens[i]),
    parents: keep.map((i) => {
      const p = (d.parents as number[])[i];
      return p < 0 ? -1 : (index.get(p) ?? -1);
    }),
  };
}

/**
 * Where a row's tokens sit in one forward: [fed token, ...draft, ...a mask block after the fed token and after
 * each leaf, and a shorter one after every other draft token with lookaheadInner], their text positions, and
 * who may see whom. The fed token and the draft attend as a chain or tree (each token its ancestors); a mask
 * block sees the fed token, the path to the token it follows and itself; nothing sees a block, so the draft's
 * logits are exactly what they would be without one.
 */
export interface RowLayout {
  width: number;
  /** Mask positions after the draft (all its blocks). */
  masks: number;
  positions: number[];
  attend(i: number, j: number): boolean;
  /** Indices in the row of the block after draft token `node` (-1: the fed token; [] when it has none). */
  blockOf(node: number): number[];
}

export function layoutRow(d: Draft, pos0: number, rule: PositionRule): RowLayout {
  const n = d.tokens.length;
  const parents = parentsOf(d);
  const lookahead = d.lookahead ?? 0;
  const inner = lookahead ? Math.min(lookahead, d.lookaheadInner ?? 0) : 0;
  // A block after the fed token too: when the draft's first token is rejected, that block was conditioned on
  // exactly the committed text, and its tail still lines up after a partly kept draft. With lookaheadInner, a
  // (shorter) block after every other draft token as well: whatever is kept, one block saw exactly it.
  const leaves = new Set(n ? leavesOf(d) : []);
  const sized: [number, number][] = !lookahead ? [] : [[-1, lookahead]];
  for (let i = 0; i < n; i++) {
    if (leaves.has(i)) sized.push([i, lookahead]);
    else if (inner) sized.push([i, inner]);
  }
  // Each draft token's position follows its parent's (parents come first in a draft).
  const positions = [pos0];
  for (let i = 0; i < n; i++) positions.push(rule.next(positions[parents[i] + 1], d.tokens[i]));
  const owner: number[] = []; // for each block position (row index 1 + n + m), the token it follows
  const start = new Map<number, [number, number]>(); // node -> [row index of its block, block length]
  for (const [node, size] of sized) {
    const base = positions[node + 1];
    start.set(node, [1 + n + owner.length, size]);
    for (let k = 0; k < size; k++) {
      positions.push(rule.block(base, k));
      owner.push(node);
    }
  }
  const width = 1 + n + owner.length;
  return {
    width,
    masks: owner.length,
    positions,
    attend(i, j) {
      if (i === j) return true;
      if (i >= width || j >= width) return false; // padding sees nothing new and is seen by nothing
      if (j > n) return i > n && owner[i - 1 - n] === owner[j - 1 - n]; // a block is seen by itself only
      if (j === 0) return true; // everything follows the fed token
      if (i === 0) return false;
      const leaf = i > n ? owner[i - 1 - n] : i - 1;
      return leaf >= 0 && isAncestor(parents, j - 1, leaf);
    },
    blockOf(node) {
      const at = start.get(node);
      return at ? Array.from({ length: at[1] }, (_, k) => at[0] + k) : [];
    },
  };
}
