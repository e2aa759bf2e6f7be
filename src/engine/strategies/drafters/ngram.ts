/**
 * N-gram drafting (prompt lookup): the longest recent suffix of the line is looked up in what this document
 * has already produced (earlier lines, and the line itself), and what followed it there is the draft.
 * Repeated headers, table columns and recurring words come back for one forward.
 */
import { LOOKUP_MIN_N } from '../drafting-context.js';
import type { Draft } from '../draft.js';
import type { Drafter, SequenceView } from './drafter.js';
import { continuation, findSuffix } from './lookup.js';

const MAX_N = 8;

export class NgramDrafter implements Drafter {
  readonly name = 'ngram';

  constructor(private readonly eos: number) {}

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      if (seq.budget <= 0 || seq.tokens.length < LOOKUP_MIN_N) return { tokens: [] };
      const doc = seq.context.history;
      const inDoc = doc.find(seq.tokens, MAX_N);
      // The line's own earlier text (findSuffix only takes matches with a token after them, never the suffix itself).
      const inLine = findSuffix(seq.tokens, seq.tokens, LOOKUP_MIN_N, MAX_N);
      if (inLine && (!inDoc || inLine.n > inDoc.n))
        return { tokens: continuation(seq.tokens, inLine.end, seq.budget, this.eos) };
      if (inDoc) return { tokens: continuation(doc.tokens, inDoc.end, seq.budget, this.eos) };
      return { tokens: [] };
    });
  }
}
