/**
 * Text a document has already produced, for drafters that copy from it: the lines decoded so far (ngram)
 * and the client's reference text (reference). One context per document of one request; contexts are never
 * shared across requests, so one tenant's text can never be drafted into another's.
 */
import type { Tokenizer } from './tokenizer.js';

export class DocumentContext {
  /** Finished lines, each followed by EOS, in the order they finished. */
  readonly history: number[] = [];
  /** The reference text as ids, each newline turned into EOS (a line ends there). */
  readonly reference: number[];

  constructor(tokenizer: Tokenizer, reference?: string) {
    this.reference = [];
    if (reference) {
      for (const line of reference.split(/\r?\n/)) {
        const t = line.replace(/\s+/g, ' ').trim();
        if (!t) continue;
        this.reference.push(...tokenizer.encode(t), tokenizer.special.eos);
      }
    }
  }

  addLine(ids: readonly number[], eos: number): void {
    this.history.push(...ids, eos);
  }
}
