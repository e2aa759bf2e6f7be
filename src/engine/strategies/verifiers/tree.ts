/**
 * Tree verification (SpecInfer): the whole tree went through one forward, each node seeing only its
 * ancestors; walk from the root, at each step taking the child that equals the model's argmax there.
 * Lossless: every kept token is the argmax given exactly the tokens before it.
 */
import { argmax, type Draft, parentsOf, type RowLogits, type Verdict } from '../draft.js';
import type { Verifier } from './verifier.js';

export class TreeVerifier implements Verifier {
  readonly name = 'tree';
  readonly lossless = true;
  readonly trees = true;

  verify(draft: Draft, logits: RowLogits): Verdict {
    const parents = parentsOf(draft);
    const accepted: number[] = [];
    let node = -1;
    let expected = argmax(logits.at(0));
    for (;;) {
      let next = -1;
      for (let i = 0; i < draft.tokens.length; i++) {
        if (parents[i] === node && draft.tokens[i] === expected) {
          next = i;
          break;
        }
      }
      if (next < 0) break;
      accepted.push(next);
      node = next;
      expected = argmax(logits.at(next + 1));
    }
    return { accepted, bonus: expected };
  }
}
