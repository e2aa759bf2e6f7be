/** Drafters that propose junk on purpose: a lossless verifier must make them cost speed, never text. */
import type { Draft } from '../../src/engine/strategies/draft.js';
import type { Drafter, SequenceView } from '../../src/engine/strategies/drafters/drafter.js';

/** A small deterministic PRNG so failures reproduce. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export class RandomDrafter implements Drafter {
  readonly name = 'random';
  private readonly next: () => number;

  constructor(
    private readonly vocab: number,
    seed: number,
    private readonly asTree = false,
  ) {
    this.next = rng(seed);
  }

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((s) => {
      const n = Math.floor(this.next() * (s.budget + 1));
      const tokens = Array.from({ length: n }, () => Math.floor(this.next() * this.vocab));
      if (!this.asTree || !s.tree) return { tokens };
      return { tokens, parents: tokens.map((_, i) => (i === 0 ? -1 : Math.floor(this.next() * (i + 1)) - 1)) };
    });
  }
}

export class EmptyDrafter implements Drafter {
  readonly name = 'empty';

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map(() => ({ tokens: [] }));
  }
}

/** The CTC reading from where the line is, then junk far past the line's end (no EOS). */
export class OverlongDrafter implements Drafter {
  readonly name = 'overlong';
  private readonly next = rng(7);

  constructor(
    private readonly vocab: number,
    private readonly eos: number,
  ) {}

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((s) => {
      const tokens = s.ctc.slice(s.tokens.length, s.tokens.length + s.budget);
      while (tokens.length < s.budget) {
        const t = 5 + Math.floor(this.next() * (this.vocab - 5));
        tokens.push(t === this.eos ? 5 : t);
      }
      return { tokens };
    });
  }
}

/** Trees that break the contract: parents after their children, past the end, or below -1. */
export class MalformedTreeDrafter implements Drafter {
  readonly name = 'malformed';
  private readonly next = rng(11);

  constructor(private readonly vocab: number) {}

  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((s) => {
      const n = s.budget;
      const tokens = Array.from({ length: n }, () => Math.floor(this.next() * this.vocab));
      const parents = tokens.map((_, i) => [i - 1, i + 1, n + 3, -7, i][Math.floor(this.next() * 5)]);
      return { tokens, parents };
    });
  }
}
