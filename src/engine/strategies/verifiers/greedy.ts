/** Greedy verification: keep the longest drafted prefix equal to the model's own argmax, plus one bonus token. */
import { argmax, type Draft, type RowLogits, type Verdict } from '../draft.js';
import type { Verifier } from './verifier.js';

export class GreedyVerifier implements Verifier {
  readonly name = 'greedy';
  readonly lossless = true;
  readonly trees = false;

  verify(draft: Draft, logits: RowLogits): Verdict {
    if (draft.parents && draft.parents.some((p, i) => p !== i - 1)) {
      throw new Error('the greedy verifier takes chains; use the tree verifier for trees');
    }
    const accepted: number[] = [];
    let expected = argmax(logits.at(0));
    for (let i = 0; i < draft.tokens.length && draft.tokens[i] === expected; i++) {
      accepted.push(i);
      expected = argmax(logits.at(i + 1));
    }
    return { accepted, bonus: expected };
  }
}
