/**
 * How many tokens to draft. A fixed number, or `auto`: from this sequence's measured acceptance rate a and
 * the measured cost of a forward carrying T tokens per row at this batch size, choose k maximising
 *   E[tokens committed] / relative cost = (1 - a^(k+1)) / (1 - a) / (cost(B, 1 + k) / cost(B, 1)),
 * and draft nothing where no k beats plain decoding (large batches, poor drafts).
 */
export type DraftLengthSetting = number | 'auto';

export const MAX_DRAFT_LENGTH = 32;

/** Piecewise-linear through (xs, ys), extended linearly past both ends; xs ascending. */
function interp(xs: readonly number[], ys: readonly number[], x: number): number {
  if (xs.length === 1) return ys[0];
  let i = 1;
  while (i < xs.length - 1 && xs[i] < x) i++;
  return ys[i - 1] + ((ys[i] - ys[i - 1]) * (x - xs[i - 1])) / (xs[i] - xs[i - 1]);
}

export interface CostPoint {
  batch: number;
  perRow: number;
  ms: number;
}

/** Forward cost by batch size and tokens per row, measured on this machine (see Scheduler.calibrate). */
export class CostTable {
  private readonly batches: number[];
  private readonly rows: Map<number, CostPoint[]>;

  constructor(readonly points: readonly CostPoint[]) {
    this.batches = [...new Set(points.map((p) => p.batch))].sort((a, b) => a - b);
    this.rows = new Map(this.batches.map((b) => [b, points.filter((p) => p.batch === b).sort((x, y) => x.perRow - y.perRow)]));
  }

  /** Cost of T tokens per row relative to 1 token per row, at batch B (linear in T, in log B between batches). */
  relative(batch: number, perRow: number): number {
    const rel = this.batches.map((b) => {
      const row = this.rows.get(b) as CostPoint[];
      const xs = row.map((p) => p.perRow);
      const ys = row.map((p) => p.ms);
      return interp(xs, ys, perRow) / interp(xs, ys, 1);
    });
    const b = Math.min(Math.max(batch, this.batches[0]), this.batches[this.batches.length - 1]);
    return interp(this.batches.map(Math.log), rel, Math.log(b));
  }
}

export class DraftLengthPolicy {
  private successes = 3; // a prior of acceptance 0.75 over 4 trials
  private trials = 4;
  private idle = 0;

  constructor(readonly setting: DraftLengthSetting) {}

  get acceptance(): number {
    return this.successes / this.trials;
  }

  /** `width`: tokens a draft of k puts in the forward per drafted token (2 for diffusion: draft plus block). */
  next(batch: number, costs: CostTable | null, width = 1): number {
    if (this.setting !== 'auto') return this.setting;
    if (!costs) return 4;
    const a = Math.min(0.99, this.acceptance);
    let best = 0;
    let bestRate = 1; // plain decoding: one token per unit cost
    for (let k = 1; k <= MAX_DRAFT_LENGTH; k++) {
      const expected = (1 - a ** (k + 1)) / (1 - a);
      const rate = expected / costs.relative(batch, 1 + width * k);
      if (rate > bestRate * 1.02) {
        best = k;
        bestRate = rate;
      }
    }
    // Drafting switched off learns nothing; probe with a short draft now and then.
    if (best === 0 && ++this.idle % 16 === 0) return 2;
    return best;
  }

  /** A draft of `proposed` tokens of which the first `accepted` were kept. */
  observe(proposed: number, accepted: number): void {
    if (proposed <= 0) return;
    // Each accepted position is a success, the first rejected one a failure; old evidence decays.
    const decay = 0.97;
    this.successes = this.successes * decay + accepted;
    this.trials = this.trials * decay + accepted + (accepted < proposed ? 1 : 0);
  }
}
