/** What every verifier is: it reads one row's logits and decides what the draft earns. */
import type { Draft, RowLogits, Verdict } from '../draft.js';

/** The line a row belongs to, for verifiers that keep per-line state (joint). */
export interface VerifiedLine {
  readonly id: number;
  /** The CTC head's log-probabilities over this line's real visual tokens ([frames, vocab]), read when asked for. */
  ctc(): { logProbs: Float32Array; frames: number; vocab: number };
}

export interface Verifier {
  readonly name: string;
  /** Lossless verifiers commit exactly what plain greedy decoding would. */
  readonly lossless: boolean;
  /** Can it verify a tree (several alternatives per position) rather than a chain? */
  readonly trees: boolean;
  /** The verdict's accepted tokens and bonus are what the line commits next (or it finishes). */
  verify(draft: Draft, logits: RowLogits, line: VerifiedLine): Verdict;
  /** The line finished: drop its state. */
  release?(lineId: number): void;
}
