/** What decoder steps cost on this machine: the calibrated forward-cost table, and the costs measured as steps run. */
import type { Bundle } from '../bundle/bundle.js';
import { measureCosts } from './calibrate.js';
import type { CostTable } from '../strategies/draft-length.js';
import type { SchedulerOptions } from './scheduler-options.js';
import type { StepRecord } from './step/record.js';

export class StepCosts {
  /** The forward-cost table (null until calibrated). */
  table: CostTable | null = null;
  private calibrating: Promise<CostTable> | null = null;
  /**
   * What a step costs besides its forward and its drafting (building inputs, verifying, committing, compacting),
   * per row, measured as steps run: it is paid once per forward, so it makes long drafts cheaper than the
   * forward-cost table alone says (at batch 32 it is comparable to the forward itself).
   */
  overheadPerRow = 0;
  /**
   * Per drafter (by name): what drafting one token costs per drafting row, measured as steps run. A model-backed
   * head (mtp, pmtp, routed) runs once per depth, which on a small model is a real share of a step: the auto
   * draft length has to count it, or it drafts deeper than pays.
   */
  readonly draftMsPerTokenRow = new Map<string, number>();

  constructor(
    private readonly bundle: Bundle,
    private readonly opts: SchedulerOptions,
  ) {}

  /**
   * Measure what a forward costs at a few batch sizes and tokens per row, so `auto` draft lengths weigh
   * acceptance against this machine's real cost. Runs once, on dummy inputs (cost does not depend on them).
   */
  calibrate(): Promise<CostTable> {
    // Concurrent requests share one calibration.
    this.calibrating ??= this.measureCosts().catch((e: unknown) => {
      this.calibrating = null;
      throw e;
    });
    return this.calibrating;
  }

  private async measureCosts(): Promise<CostTable> {
    this.table = await measureCosts(this.bundle, this.opts.maxBatch);
    return this.table;
  }

  /** Fold a finished step's overhead (what it took besides drafting and the forward) into the running average. */
  stepDone(rec: StepRecord): void {
    const overhead =
      Math.max(0, performance.now() - rec.startedAt - rec.draftMs - rec.forwardMs) / Math.max(1, rec.live);
    this.overheadPerRow = this.overheadPerRow === 0 ? overhead : 0.9 * this.overheadPerRow + 0.1 * overhead;
  }
}
