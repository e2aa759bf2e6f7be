/** What every verifier is: it reads one row's logits and decides what the draft earns. */
import type { Draft, RowLogits, Verdict } from '../draft.js';

export interface Verifier {
  readonly name: string;
  /** Lossless verifiers commit exactly what plain greedy decoding would. */
  readonly lossless: boolean;
  /** Can it verify a tree (several alternatives per position) rather than a chain? */
  readonly trees: boolean;
  verify(draft: Draft, logits: RowLogits): Verdict;
}
