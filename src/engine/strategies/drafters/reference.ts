/**
 * Reference drafting: the client sent text this document should contain (a PDF's text layer, an earlier OCR
 * pass). A line's start is found in it from the line's CTC reading; after that the line's own suffix is looked
 * up near where the previous match ended. A wrong or unrelated reference only costs drafts that get rejected.
 */
import { LOOKUP_MIN_N } from '../drafting-context.js';
import type { Draft } from '../draft.js';
import type { Drafter, SequenceView } from './drafter.js';
import { continuation } from './lookup.js';

const MAX_N = 12;
const PROBE = 8;

export class ReferenceDrafter implements Drafter {
  readonly name = 'reference';
  private readonly cursor = new Map<number, number>();

  constructor(private readonly eos: number) {}

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((seq) => {
      const ref = seq.context.reference;
      if (seq.budget <= 0 || !ref.tokens.length) return { tokens: [] };
      let start: number | undefined;
      if (seq.tokens.length < LOOKUP_MIN_N) {
        // Line start: place the line in the reference by its CTC reading (a match of the probe's tail still
        // places it: count back over the probe's length).
        const probe = seq.ctc.slice(0, PROBE);
        const m = ref.find(probe, PROBE);
        if (m) start = Math.max(0, m.end - probe.length + seq.tokens.length);
      } else {
        const m = ref.find(seq.tokens, MAX_N, this.cursor.get(seq.id));
        if (m) start = m.end;
      }
      if (start === undefined) return { tokens: [] };
      this.cursor.set(seq.id, start);
      return { tokens: continuation(ref.tokens, start, seq.budget, this.eos) };
    });
  }

  release(seq: SequenceView): void {
    this.cursor.delete(seq.id);
  }
}
