/** Character-level tokenizer: ids <-> text, from the bundle's vocabulary. */
export interface SpecialIds {
  pad: number;
  bos: number;
  eos: number;
  mask: number;
  unk: number;
  ctcBlank: number;
}

export class Tokenizer {
  readonly vocab: readonly string[];
  readonly special: SpecialIds;
  private readonly ids: Map<string, number>;
  private readonly firstChar: number;

  /** lineBreak: the id that separates a region's lines (region bundles: BOS), decoded as '\n'. */
  constructor(
    vocab: readonly string[],
    special: SpecialIds,
    readonly lineBreak?: number,
  ) {
    this.vocab = vocab;
    this.special = special;
    this.firstChar = Math.max(special.pad, special.bos, special.eos, special.mask, special.unk) + 1;
    this.ids = new Map();
    for (let i = this.firstChar; i < vocab.length; i++) this.ids.set(vocab[i], i);
  }

  get size(): number {
    return this.vocab.length;
  }

  isText(id: number): boolean {
    return id >= this.firstChar && id < this.vocab.length;
  }

  /** Characters outside the vocabulary become `unk`. */
  encode(text: string): number[] {
    return Array.from(text, (ch) => this.ids.get(ch) ?? this.special.unk);
  }

  /** Stops at EOS; special ids other than EOS (and a region's line break) are dropped. */
  decode(ids: Iterable<number>): string {
    let out = '';
    for (const id of ids) {
      if (id === this.special.eos) break;
      if (id === this.lineBreak) out += '\n';
      else if (this.isText(id)) out += this.vocab[id];
    }
    return out;
  }
}
