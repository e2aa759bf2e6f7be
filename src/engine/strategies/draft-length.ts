/**
 * How many tokens to draft. A fixed number, or `auto`: from the request's measured acceptance (c_j: token j kept
 * given the ones before it were; per draft position, or per band of the drafter's own confidence in token j) and
 * the measured cost of a forward carrying T tokens per row at this batch size, choose the forward's width T
 * maximising, over its rows r, each drafting k_r = as deep as T holds,
 * sum_r E[tokens committed by r] / relative cost = sum_r (1 + sum_{i<=k_r} prod_{j<=i} c_rj) / ((cost(B, T) + o + sum_r
 * k_r d_r) / (cost(B, 1) + o)), where o is what a step costs besides its forward and d_r what drafting one more token
 * costs row r's drafter (a model-backed head runs once per draft depth; both measured as the scheduler runs), and draft
 * nothing where no width beats plain decoding (large batches, poor drafts, a drafter dearer than what it saves).
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
      // the overhead measured at `batch` rows, as it would be at b rows
      const scale = this.batches[i] / Math.max(1, batch);
      rel[i] =
        (interp(this.xs[i], this.ys[i], perRow) + (overheadMs + draftMs) * scale) /
        (this.atOne[i] + overheadMs * scale);
    }
    const b = Math.min(Math.max(batch, this.batches[0]), this.batches[this.batches.length - 1]);
    return interp(this.logBatches, rel, Math.log(b));
  }
}

/**
 * The drafter's own probability for a token (its `confidence`), in bands by how far it is from 1: acceptance is
 * learnt per band, so a line the CTC head read cleanly drafts deep beside a garbled one that drafts short.
 */
const SURE_EDGES = [1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5];
/** Each band's acceptance before any evidence (weighted as 4 trials). */
const BAND_PRIOR = [0.99, 0.98, 0.95, 0.9, 0.75, 0.5, 0.3];

function bandOf(p: number): number {
  const doubt = 1 - p;
  let i = 0;
  while (i < SURE_EDGES.length && doubt >= SURE_EDGES[i]) i++;
  return i;
}

/**
 * What one row of a forward can draft: P(token j kept | the tokens before it kept) for j = 0.. (its length is as
 * deep as the drafter can go), the forward width a draft of k takes, and what drafting a token costs.
 */
export interface RowOutlook {
  accept: ArrayLike<number>;
  width: (k: number) => number;
  draftMsPerToken: number;
}

/**
 * The draft depth of each row of one forward. A forward costs the same for a row's padding as for its draft
 * tokens, so the choice is one width T for the whole forward: every row drafts as deep as fits in T, and T maximises
 *   (sum over rows of E[tokens committed]) / relative cost of a T-token forward,
 * counting from `floor` (the width rows of a fixed draft length already give it). A longer width must beat the
 * best so far by 2%: no drafting pays only where it clearly does.
 */
export function planDepths(
  rows: readonly RowOutlook[],
  batch: number,
  costs: CostTable,
  overheadMs = 0,
  floor = 1,
): number[] {
  // Per row, E[tokens committed] with a draft of k: 1 (the bonus) + sum over i <= k of P(first i all kept).
  const expected = rows.map((r) => {
    const e = [1];
    let survive = 1;
    for (let k = 1; k <= r.accept.length; k++) {
      survive *= r.accept[k - 1];
      e.push(e[k - 1] + survive);
    }
    return e;
  });
  const widest = Math.max(floor, ...rows.map((r) => 1 + r.width(r.accept.length)));
  // Each row's depth at the width being priced: widths only grow, so depths only grow.
  const depth = rows.map(() => 0);
  const fit = (t: number): void => {
    rows.forEach((r, i) => {
      while (depth[i] < r.accept.length && 1 + r.width(depth[i] + 1) <= t) depth[i]++;
    });
  };
  const rateAt = (t: number): number => {
    fit(t);
    let tokens = 0;
    let draftMs = 0;
    rows.forEach((r, i) => {
      tokens += expected[i][depth[i]];
      draftMs += r.draftMsPerToken * depth[i];
    });
    return tokens / costs.relative(batch, t, overheadMs, draftMs);
  };
  let best = floor;
  let bestRate = rateAt(floor);
  for (let t = floor + 1; t <= widest; t++) {
    const rate = rateAt(t);
    if (rate > bestRate * 1.02) {
      best = t;
      bestRate = rate;
    }
  }
  depth.fill(0);
  fit(best);
  return depth;
}

/**
 * One request's draft length (its lines share it, so it learns from all of them). Acceptance is tracked per
 * draft position, as the chance that token j is kept given that the tokens before it were: drafts tend to fail
 * early or not at all, which one overall rate would misjudge for long drafts. A drafter that knows how sure it is
 * of each token (the CTC head's probability) is judged by that instead, per band of confidence.
 */
export class DraftLengthPolicy {
  /** Per position (0-based): decayed counts of drafts that reached it with everything before kept, and kept it. */
  private readonly tried = new Array<number>(MAX_DRAFT_LENGTH).fill(0);
  private readonly kept = new Array<number>(MAX_DRAFT_LENGTH).fill(0);
  /** The same per band of the drafter's confidence. */
  private readonly bandTried = new Array<number>(BAND_PRIOR.length).fill(0);
  private readonly bandKept = new Array<number>(BAND_PRIOR.length).fill(0);
  private idle = 0;

  constructor(readonly setting: DraftLengthSetting) {}

  /** P(token j kept | tokens before it kept); positions without evidence take the deepest one with some. */
  rate(j: number): number {
    let i = Math.min(j, MAX_DRAFT_LENGTH - 1);
    while (i > 0 && this.tried[i] < 1) i--;
    // A prior of 0.75 over 4 trials.
    return Math.min(0.99, (this.kept[i] + 3) / (this.tried[i] + 4));
  }

  /** P(a token kept | tokens before it kept) for a token its drafter gave probability p. */
  rateFor(p: number): number {
    const b = bandOf(p);
    return Math.min(0.999, (this.bandKept[b] + 4 * BAND_PRIOR[b]) / (this.bandTried[b] + 4));
  }

  /**
   * What a row of this request can draft this step, up to `most` tokens: from the drafter's confidence in each
   * token where it has one (`confidence`, one per token it would draft), else from the positions' rates.
   */
  outlook(
    most: number,
    confidence: readonly number[] | undefined,
    width: (k: number) => number,
    draftMsPerToken: number,
  ): RowOutlook {
    const n = Math.min(most, confidence ? confidence.length : MAX_DRAFT_LENGTH, MAX_DRAFT_LENGTH);
    const accept = new Float64Array(Math.max(0, n));
    for (let j = 0; j < n; j++) accept[j] = confidence ? this.rateFor(confidence[j]) : this.rate(j);
    return { accept, width, draftMsPerToken };
  }

  /** Drafting switched off learns nothing: every 16th step that drafts nothing, a short probe (2 tokens). */
  probe(): number {
    return ++this.idle % 16 === 0 ? 2 : 0;
  }

  /**
   * A draft of `proposed` tokens of which the first `accepted` were kept; `confidence`: the drafter's for each
   * token it proposed, when it gave one.
   */
  observe(proposed: number, accepted: number, confidence?: readonly number[]): void {
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
    if (!confidence) return;
    for (let b = 0; b < BAND_PRIOR.length; b++) {
      this.bandTried[b] *= decay;
      this.bandKept[b] *= decay;
    }
    for (let j = 0; j < Math.min(proposed, accepted + 1, confidence.length); j++) {
      const b = bandOf(confidence[j]);
      this.bandTried[b] += 1;
      if (j < accepted) this.bandKept[b] += 1;
    }
  }
}
