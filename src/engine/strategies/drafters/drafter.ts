/** What every drafter is, and the view of a sequence it drafts for. */
import type { DraftingContext } from '../drafting-context.js';
import type { Draft, ForwardView, Verdict } from '../draft.js';

export interface SequenceView {
  readonly id: number;
  /** Committed ids so far (no BOS). The last of them is not yet in the KV cache: it is fed with the draft. */
  readonly tokens: readonly number[];
  /** The CTC head's greedy reading of this line, computed in the vision pass. */
  readonly ctc: readonly number[];
  /** The visual column each character of `ctc` was emitted at. */
  readonly ctcFrames: readonly number[];
  /** The CTC head's probability for each character of `ctc`, at the column it was emitted at. */
  readonly ctcProbs: readonly number[];
  readonly context: DraftingContext;
  /** Most tokens this step's draft may hold (tree: depth). 0 means no draft. */
  readonly budget: number;
  /** The verifier takes trees, so alternatives may be offered. */
  readonly tree: boolean;
  /** The decoder's hidden state at the position that decided the last committed token (null before the first step). */
  readonly hidden: Float32Array | null;
  /**
   * The focal layers' attention over this line's visual tokens (every column) at the position that decided the
   * last committed token: where the model is reading. Kept only for drafters that route by it (null before the
   * first step).
   */
  readonly attention: Float32Array | null;
  /** The text position the last committed token will be fed at. */
  readonly position: number;
  /** This line's visual keys/values of the decoder's last layer ([H, V, dh] each) and its visual mask [V]. */
  lastLayerVisual(): { k: Float32Array; v: Float32Array; mask: Float32Array; visual: number };
}

export interface Drafter {
  readonly name: string;
  /** The drafter starts from the decoder's hidden state (SequenceView.hidden): only then is it kept per step. */
  readonly usesHiddenState?: boolean;
  /**
   * Tokens a draft of k puts in the forward besides the fed token (default k; a diffusion draft also brings its
   * mask blocks). The draft-length policy prices a draft by it.
   */
  forwardWidth?(k: number): number;
  /**
   * The drafter ends each line's draft where its own confidence gate closes, at most this deep: under an `auto`
   * draft length it gets this whole depth, and the gate, not the draft-length policy, sets each draft's length.
   */
  readonly gatedDepth?: number;
  /**
   * How sure the drafter is of each of the next `k` tokens it would draft for this sequence (a probability per
   * token, as many as it has), asked before it proposes: an `auto` draft length weighs each token by it.
   */
  confidence?(seq: SequenceView, k: number): number[];
  /** The drafter routes by where the model is reading (SequenceView.attention): only then is it kept per step. */
  readonly usesAttention?: boolean;
  /** Drafts for these sequences; a drafter that runs a model answers asynchronously. */
  propose(seqs: readonly SequenceView[]): Draft[] | Promise<Draft[]>;
  /**
   * What the verifier kept and committed (accepted draft tokens, then the bonus), for stateful drafters, and
   * what the forward computed for this line (a diffusion drafter's next draft is in its lookahead blocks).
   */
  observe?(seq: SequenceView, draft: Draft, verdict: Verdict, committed: readonly number[], forward: ForwardView): void;
  /** The sequence finished: drop its state. */
  release?(seq: SequenceView): void;
}

/** Merge chains that share prefixes into one tree draft (a trie), children after parents. */
export function trieOf(chains: readonly (readonly number[])[]): Draft {
  const tokens: number[] = [];
  const parents: number[] = [];
  for (const chain of chains) {
    let parent = -1;
    for (const tok of chain) {
      let found = -1;
      for (let i = 0; i < tokens.length; i++) {
        if (parents[i] === parent && tokens[i] === tok) {
          found = i;
          break;
        }
      }
      if (found < 0) {
        tokens.push(tok);
        parents.push(parent);
        found = tokens.length - 1;
      }
      parent = found;
    }
  }
  return { tokens, parents };
}
