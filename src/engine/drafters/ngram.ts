/**
 * N-gram drafting (prompt lookup): the longest recent suffix of the line is looked up in what this document
 * has already produced (earlier lines, and the line itself), and what followed it there is the draft.
 * Repeated headers, table columns and recurring words come back for one forward.
 */
import type { Draft } from '../draft.js';
import type { Drafter, SequenceView } from './drafter.js';
import { continuation, findSuffix } from './lookup.js';

export class NgramDrafter implements Drafter {
  readonly name = 'ngram';

  constructor(private readonly eos: number, private readonly minN = 2, private readonly maxN = 8) {}

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      if (seq.budget <= 0 || seq.tokens.length < this.minN) return { tokens: [] };
      // Earlier lines of the document, then this line without its last token (so the suffix cannot match itself).
      const hay = [...seq.context.history, ...seq.tokens.slice(0, -1)];
      const m = findSuffix(hay, seq.tokens, this.minN, this.maxN);
      if (!m) return { tokens: [] };
      return { tokens: continuation(hay, m.end, seq.budget, this.eos) };
    });
  }
}
