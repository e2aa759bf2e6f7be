/**
 * Reference drafting: the client sent text this document should contain (a PDF's text layer, an earlier OCR
 * pass). A line's start is found in it from the line's CTC reading; after that the line's own suffix is looked
 * up near where the previous match ended. A wrong or unrelated reference only costs drafts that get rejected.
 */
import type { Draft } from '../draft.js';
import type { Drafter, SequenceView } from './drafter.js';
import { continuation, findSuffix } from './lookup.js';

export class ReferenceDrafter implements Drafter {
  readonly name = 'reference';
  private readonly cursor = new Map<number, number>();

  constructor(private readonly eos: number, private readonly minN = 2, private readonly maxN = 12) {}

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      const ref = seq.context.reference;
      if (seq.budget <= 0 || !ref.length) return { tokens: [] };
      let start: number | undefined;
      if (seq.tokens.length < this.minN) {
        // Line start: place the line in the reference by its CTC reading.
        const probe = seq.ctc.slice(0, 8);
        const m = probe.length >= 3 ? findSuffix(ref, probe, 3, probe.length) : null;
        // A match of the probe's tail still places the line: count back over the probe's length.
        if (m) start = Math.max(0, m.end - probe.length + seq.tokens.length);
      } else {
        const m = findSuffix(ref, seq.tokens, this.minN, this.maxN, this.cursor.get(seq.id));
        if (m) start = m.end;
      }
      if (start === undefined) return { tokens: [] };
      this.cursor.set(seq.id, start);
      return { tokens: continuation(ref, start, seq.budget, this.eos) };
    });
  }

  release(seq: SequenceView): void {
    this.cursor.delete(seq.id);
  }
}
