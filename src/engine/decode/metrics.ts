/**
 * Per-request speculation metrics, named as vLLM names them so operators recognise them. "Mean acceptance
 * length" is committed tokens per sequence-forward, counting the verifier's bonus token: plain AR is 1.0.
 */
export interface SpecMetricsSnapshot {
  /** Decoder forwards this request took part in (batched forwards are counted once). */
  forwards: number;
  /** Per-line forwards summed over the request's lines: the denominator of meanAcceptanceLength. */
  sequenceForwards: number;
  drafts: number;
  draftTokens: number;
  acceptedTokens: number;
  /** Tokens committed (accepted + bonus), EOS included. */
  committedTokens: number;
  meanAcceptanceLength: number;
  /** Share of drafts reaching position i whose token i was accepted. */
  acceptanceByPosition: number[];
  /** Decoder forwards plus drafting, the time a line spends being decoded (shared work counted whole). */
  decodeMs: number;
  /** The drafting share of decodeMs: drafters that run a model (mtp) spend it outside the decoder forward. */
  draftMs: number;
  /** Vision passes this request's lines were admitted with (a pass shared with other requests counts whole). */
  visionMs: number;
  /** Mean share of a line's visual tokens attended per decoder step (1 without focal pruning). */
  visualTokenRatio: number;
}

export class SpecMetrics {
  private forwards = 0;
  private sequenceForwards = 0;
  private drafts = 0;
  private draftTokens = 0;
  private acceptedTokens = 0;
  private committedTokens = 0;
  private decodeMs = 0;
  private draftMs = 0;
  private readonly visionPasses = new Map<number, number>();
  private readonly reached: number[] = [];
  private readonly acceptedAt: number[] = [];
  private visualSum = 0;
  private visualSteps = 0;

  /** One line-step under focal pruning attended to this share of the line's visual tokens. */
  visual(ratio: number): void {
    this.visualSum += ratio;
    this.visualSteps++;
  }

  /** One batched forward this request took part in. */
  forward(ms: number): void {
    this.forwards++;
    this.decodeMs += ms;
  }

  /** One drafting call this request's lines took part in (shared calls count whole, as forwards do). */
  drafting(ms: number): void {
    this.draftMs += ms;
    this.decodeMs += ms;
  }

  /** A vision pass one of this request's lines was admitted with (counted once however many lines it held). */
  vision(pass: number, ms: number): void {
    this.visionPasses.set(pass, ms);
  }

  /** One line's share of a forward: its draft depth, how many were accepted, what it committed. */
  row(draftDepth: number, draftTokens: number, accepted: number, committed: number): void {
    this.sequenceForwards++;
    this.committedTokens += committed;
    if (draftTokens > 0) {
      this.drafts++;
      this.draftTokens += draftTokens;
      this.acceptedTokens += accepted;
    }
    for (let i = 0; i < draftDepth; i++) {
      this.reached[i] = (this.reached[i] ?? 0) + 1;
      if (i < accepted) this.acceptedAt[i] = (this.acceptedAt[i] ?? 0) + 1;
    }
  }

  snapshot(): SpecMetricsSnapshot {
    return {
      forwards: this.forwards,
      sequenceForwards: this.sequenceForwards,
      drafts: this.drafts,
      draftTokens: this.draftTokens,
      acceptedTokens: this.acceptedTokens,
      committedTokens: this.committedTokens,
      meanAcceptanceLength: this.sequenceForwards ? this.committedTokens / this.sequenceForwards : 0,
      acceptanceByPosition: this.reached.map((n, i) => (this.acceptedAt[i] ?? 0) / n),
      decodeMs: this.decodeMs,
      draftMs: this.draftMs,
      visionMs: [...this.visionPasses.values()].reduce((a, b) => a + b, 0),
      // Line-steps without pruning attended to everything.
      visualTokenRatio: this.sequenceForwards
        ? (this.visualSum + Math.max(0, this.sequenceForwards - this.visualSteps)) / this.sequenceForwards
        : 1,
    };
  }
}
