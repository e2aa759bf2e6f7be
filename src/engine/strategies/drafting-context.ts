/**
 * Text a document has already produced, for drafters that copy from it: the lines decoded so far (ngram)
 * and the client's reference text (reference). One context per document of one request; contexts are never
 * shared across requests, so one tenant's text can never be drafted into another's.
 */
import { TokenIndex } from './drafters/lookup.js';
import type { Tokenizer } from '../bundle/tokenizer.js';

export const LOOKUP_MIN_N = 2;

export class DraftingContext {
  /** Finished lines, each followed by EOS, in the order they finished. */
  readonly history = new TokenIndex(LOOKUP_MIN_N);
  /** The reference text as ids, each line followed by EOS (a line ends there). */
  readonly reference = new TokenIndex(LOOKUP_MIN_N);

  constructor(tokenizer: Tokenizer, reference?: string) {
    for (const line of (reference ?? '').split(/\r?\n/)) {
      const t = line.replace(/\s+/g, ' ').trim();
      if (t) this.reference.push([...tokenizer.encode(t), tokenizer.special.eos]);
    }
  }

  addLine(ids: readonly number[], eos: number): void {
    this.history.push([...ids, eos]);
  }
}
