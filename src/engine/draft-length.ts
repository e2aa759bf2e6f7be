/**
 * How many tokens to draft. A fixed number, or `auto`: from the request's measured acceptance at each draft
 * position (c_j: token j kept given the ones before it were) and the measured cost of a forward carrying T
 * tokens per row at this batch size, choose k maximising
 *   E[tokens committed] / relative cost = (1 + sum_{i<=k} prod_{j<=i} c_j) / ((cost(B, 1 + k) + o + k d) / (cost(B, 1) + o)),
 * where o is what a step costs besides its forward and d what drafting one more token costs the drafter (a
 * model-backed head runs once per draft depth; both measured as the scheduler runs), and draft nothing where no
 * k beats plain decoding (large batches, poor drafts, a drafter dearer than what it saves).
 */
export type DraftLengthSetting = number | 'auto';

export const MAX_DRAFT_LENGTH = 32;

/** Piecewise-linear through (xs, ys), extended linearly past both ends; xs ascending. */
function interp(xs: ArrayLike<number>, ys: ArrayLike<number>, x: number): number {
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
  private readonly logBatches: number[];
  /** Per measured batch size: tokens per row (ascending) and the forward's ms, and the ms at one token per row. */
  private readonly xs: number[][];
  private readonly ys: number[][];
  private readonly atOne: number[];
  /** Scratch for relative(): a draft-length choice asks it 32 times per row per step, and must not make garbage. */
  private readonly rel: Float64Array;

  constructor(readonly points: readonly CostPoint[]) {
    this.batches = [...new Set(points.map((p) => p.batch))].sort((a, b) => a - b);
    this.logBatches = this.batches.map(Math.log);
    const rows = this.batches.map((b) => points.filter((p) => p.batch === b).sort((x, y) => x.perRow - y.perRow));
    this.xs = rows.map((row) => row.map((p) => p.perRow));
    this.ys = rows.map((row) => row.map((p) => p.ms));
    this.atOne = this.xs.map((xs, i) => interp(xs, this.ys[i], 1));
    this.rel = new Float64Array(this.batches.length);
  }

  /**
   * Cost of a step carrying T tokens per row relative to one carrying 1, at batch B (linear in T, in log B
   * between batches); `overheadMs`: what every step costs besides its forward; `draftMs`: what drafting those
   * tokens costs (a plain step drafts nothing).
   */
  relative(batch: number, perRow: number, overheadMs = 0, draftMs = 0): number {
    const { rel } = this;
    for (let i = 0; i < this.batches.length; i++) {
      const scale = this.batches[i] / Math.max(1, batch); // the overhead measured at `batch` rows, as it would be at b rows
      rel[i] = (interp(this.xs[i], this.ys[i], perRow) + (overheadMs + draftMs) * scale) / (this.atOne[i] + overheadMs * scale);
    }
    const b = Math.min(Math.max(batch, this.batches[0]), this.batches[this.batches.length - 1]);
    return interp(this.logBatches, rel, Math.log(b));
  }
}

/**
 * One request's draft length (its lines share it, so it learns from all of them). Acceptance is tracked per
 * draft position, as the chance that token j is kept given that the tokens before it were: drafts tend to fail
 * early or not at all, which one overall rate would misjudge for long drafts.
 */
export class DraftLengthPolicy {
  /** Per position (0-based): decayed counts of drafts that reached it with everything before kept, and kept it. */
  private readonly tried = new Array<number>(MAX_DRAFT_LENGTH).fill(0);
  private readonly kept = new Array<number>(MAX_DRAFT_LENGTH).fill(0);
  private idle = 0;

  constructor(readonly setting: DraftLengthSetting) {}

  /** P(token j kept | tokens before it kept); positions without evidence take the deepest one with some. */
  rate(j: number): number {
    let i = Math.min(j, MAX_DRAFT_LENGTH - 1);
    while (i > 0 && this.tried[i] < 1) i--;
    // A prior of 0.75 over 4 trials.
    return Math.min(0.99, (this.kept[i] + 3) / (this.tried[i] + 4));
  }

  /**
   * `width(k)`: tokens a draft of k puts in the forward besides the fed token (k, more with mask blocks);
   * `overheadMs`: what a step costs besides its forward, at this batch; `draftMsPerToken`: what the drafter
   * spends per drafted token, at this batch.
   */
  next(batch: number, costs: CostTable | null, width: (k: number) => number = (k) => k, overheadMs = 0, draftMsPerToken = 0): number {
    if (this.setting !== 'auto') return this.setting;
    if (!costs) return 4;
    let best = 0;
    let bestRate = 1; // plain decoding: one token per unit cost
    let survive = 1;
    let expected = 1; // the bonus token
    for (let k = 1; k <= MAX_DRAFT_LENGTH; k++) {
      survive *= this.rate(k - 1);
      expected += survive;
      const rate = expected / costs.relative(batch, 1 + width(k), overheadMs, draftMsPerToken * k);
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
    const decay = 0.97; // old evidence fades: acceptance changes along a document
    for (let j = 0; j < MAX_DRAFT_LENGTH; j++) {
      this.tried[j] *= decay;
      this.kept[j] *= decay;
    }
    for (let j = 0; j < Math.min(proposed, accepted + 1); j++) {
      this.tried[j] += 1;
      if (j < accepted) this.kept[j] += 1;
    }
  }
}
