/** No drafting: plain greedy autoregressive decoding, the baseline every ratio is measured against. */
import type { Draft } from '../draft.js';
import type { Drafter, SequenceView } from './drafter.js';

export class NoDrafter implements Drafter {
  readonly name = 'none';

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map(() => ({ tokens: [] }));
  }
}
