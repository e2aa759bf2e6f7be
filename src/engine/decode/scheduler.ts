/**
 * Continuous batching of line sequences. Lines join the running batch at any step (after one vision pass
 * for the group that joins) and leave it when they finish. Every step, each line's drafter proposes, one
 * decoder forward carries every line's [last token, ...draft] (ragged: padded, masked, positioned by depth),
 * each line's verifier decides, and the KV cache commits what was kept. Drafter, verifier and draft length
 * are per line, so requests with different strategies share forwards.
 */
import type { Bundle } from '../bundle/bundle.js';
import type { CostTable } from '../strategies/draft-length.js';
import { EngineError } from '../errors.js';
import { FloatPool } from './float-pool.js';
import { KvCache } from './kv-cache.js';
import { decodedOutput, withoutTooLong, withoutUnread } from './line-results.js';
import { checkTask, DraftPolicies, sequencesFor } from './line-tasks.js';
import type { GrayCrop } from '../vision/preprocess.js';
import { type PositionRule, positionRule } from './positions.js';
import { IDLE_RELEASE_MS, poolBytes, type SchedulerOptions } from './scheduler-options.js';
import type { LineOutput, LineTask, Pending, Sequence } from './sequence.js';
import { emit, type ForwardObservation } from './step/emit.js';
import { forward } from './step/forward.js';
import { plan } from './step/plan.js';
import { propose } from './step/propose.js';
import { StepCosts } from './step-costs.js';
import type { StepContext } from './step/record.js';
import { verify } from './step/verify.js';
import { splitPass, startVisionPass, type VisionPass } from '../vision/group-pass.js';
import { concatVisual, keepVisualRows, releaseVisual, type VisualState } from '../vision/visual-state.js';

export type { ForwardObservation } from './step/emit.js';
export type { LineOutput, LineTask } from './sequence.js';
export { IDLE_RELEASE_MS, poolBytes, type SchedulerOptions } from './scheduler-options.js';

export class Scheduler {
  private queue: Pending[] = [];
  private seqs: Sequence[] = [];
  private cache: KvCache | null = null;
  private vis: VisualState | null = null;
  private loop: Promise<void> | null = null;
  private nextId = 1;
  private nextGroup = 0;
  /** The vision pass in flight. */
  private vision: VisionPass | null = null;
  /** A landed pass whose lines join as the batch has room; the next pass may run meanwhile. */
  private landed: VisionPass | null = null;
  /** Set by shutdown(): the error every line still in the engine, and every later read, fails with. */
  private stopping: Error | null = null;
  /** The forward-cost table and what steps are measured to cost besides it. */
  private readonly costs: StepCosts;
  /** The batch's visual state and text cache are rebuilt as lines join and leave: on recycled buffers. */
  private readonly pool: FloatPool;
  /**
   * Visual states already computed for a crop (a page's orientation check reads its longest lines before the page
   * is read): a line whose crop is here joins the batch without a second vision pass. Weak, and taken on use, so
   * a crop never read (a page found turned and cropped again) costs nothing once dropped.
   */
  private readonly seen = new WeakMap<GrayCrop, VisualState>();
  private idleTimer: NodeJS.Timeout | null = null;

  /** One draft-length policy per request, shared by its lines. */
  private readonly policies = new DraftPolicies();
  private readonly positions: PositionRule;
  /** The space's token: evidence is weighed without spaces (ctc/score.ts). */
  private readonly space: number;

  constructor(
    private readonly bundle: Bundle,
    readonly opts: SchedulerOptions,
  ) {
    this.space = bundle.tokenizer.encode(' ')[0];
    this.positions = positionRule(bundle);
    this.pool = new FloatPool(poolBytes(bundle, opts.maxBatch));
    this.costs = new StepCosts(bundle, opts);
  }

  /** Decoder forwards run since the engine opened (all requests together). */
  forwards = 0;

  /** Called after every decoder forward; an observer that throws is ignored. */
  readonly observers = new Set<(o: ForwardObservation) => void>();

  /** Lines waiting plus lines in the batch. */
  get load(): { queued: number; active: number } {
    // Lines in a vision pass, or landed and waiting to join, count as active unless cancelled: those leave when
    // they join.
    const passing = [this.vision, this.landed].reduce(
      (n, pass) => n + (pass?.group.filter((p) => !p.task.signal?.aborted).length ?? 0),
      0,
    );
    return { queued: this.queue.length, active: this.live + passing };
  }

  /** Bytes of recycled buffers held for the next batch. */
  get pooledBytes(): number {
    return this.pool.heldBytes;
  }

  get costTable(): CostTable | null {
    return this.costs.table;
  }

  read(task: LineTask): Promise<LineOutput> {
    if (this.stopping) return Promise.reject(this.stopping);
    checkTask(this.bundle, task);
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.kick();
    });
  }

  /**
   * Measure what a forward costs at a few batch sizes and tokens per row, so `auto` draft lengths weigh
   * acceptance against this machine's real cost. Runs once, on dummy inputs (cost does not depend on them).
   */
  calibrate(): Promise<CostTable> {
    return this.costs.calibrate();
  }

  private kick(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.loop) return;
    this.loop = this.run()
      .catch((e: unknown) => {
        // Nothing may escape the loop: fail what is in flight and waiting, keep the engine alive.
        for (const p of this.queue.splice(0)) p.reject(e);
        for (const p of [...(this.vision?.group ?? []), ...(this.landed?.group ?? [])]) p.reject(e);
        this.vision = null;
        this.landed = null;
        this.failBatch(e);
      })
      .finally(() => {
        this.loop = null;
        if (this.queue.length || this.live) this.kick();
        else {
          this.idleTimer = setTimeout(() => {
            this.pool.clear();
            this.opts.collect?.();
          }, this.opts.idleReleaseMs ?? IDLE_RELEASE_MS);
          this.idleTimer.unref();
        }
      });
  }

  /**
   * Stop: lines in flight and waiting fail with `error` at the next step boundary; resolves when the loop has
   * ended, so the sessions can be released under nothing. Later reads fail with `error` at once.
   */
  async shutdown(error: Error): Promise<void> {
    this.stopping = error;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const p of this.queue.splice(0)) p.reject(error);
    await this.loop;
  }

  private get live(): number {
    let n = 0;
    for (const s of this.seqs) if (!s.done) n++;
    return n;
  }

  private async run(): Promise<void> {
    // Let every line submitted in this turn of the event loop queue up, so they share one vision pass.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length || this.live || this.vision || this.landed) {
      if (this.stopping) {
        const e = this.stopping;
        for (const s of this.seqs) if (!s.done) this.finish(s, e);
        for (const p of this.queue.splice(0)) p.reject(e);
        for (const p of this.landed?.group ?? []) p.reject(e);
        this.landed = null;
        if (this.vision) {
          await this.vision.result; // the worker finishes the pass it started; its lines fail with the rest
          for (const p of this.vision.group) p.reject(e);
          this.vision = null;
        }
        break;
      }
      if (this.vision?.settled && !this.landed) {
        this.landed = this.vision;
        this.vision = null;
      }
      this.joinLanded();
      this.startVision();
      if (!this.live) {
        if (this.vision) await this.vision.result; // nothing to decode until the vision pass lands
        continue;
      }
      try {
        await this.step();
      } catch (e) {
        // A failed forward fails the lines in flight, not the engine.
        this.failBatch(e);
      }
      // onnxruntime's promises settle without a turn of the event loop: give the vision worker's answer one.
      if (this.vision) await new Promise((resolve) => setImmediate(resolve));
    }
    this.compact(true);
  }

  /**
   * Keep each crop's row of a vision pass run outside the scheduler, for when the crop is read (null: not this row).
   */
  remember(crops: readonly (GrayCrop | null)[], state: VisualState): void {
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    crops.forEach((crop, r) => crop && this.seen.set(crop, keepVisualRows(state, [r], nLayers, nHeads, headDim)));
  }

  /**
   * Start a vision pass for the next group of lines waiting, unless one is in flight. It runs in the vision worker
   * while the batch goes on decoding, and while an earlier pass's lines wait to join: the worker reads a group
   * ahead instead of waiting on the decoder (at 8 lines a forward, reading only what fitted the batch, the decoder
   * waited on vision passes for a quarter of a docbank run with lines queued, and the worker sat idle a third of it).
   */
  private startVision(): void {
    if (this.vision) return;
    this.queue = this.queue.filter((p) => {
      if (!p.task.signal?.aborted) return true;
      p.reject(new EngineError('CANCELLED', 'decoding was cancelled'));
      return false;
    });
    if (!this.queue.length) return;
    // Half a batch a pass: as fast as whole batches, with less memory at its peak.
    this.vision = startVisionPass(
      this.bundle,
      this.queue.splice(0, Math.max(1, Math.ceil(this.opts.maxBatch / 2))),
      this.seen,
      this.pool,
    );
  }

  /**
   * The landed pass's lines join the batch as far as there is room (or fail, if the pass failed; the batch is
   * untouched); the rest waits for a later step. Joining copies the batch's caches, so a partial join waits for
   * room for a quarter of a batch, unless the batch runs low.
   */
  private joinLanded(): void {
    const pass = this.landed;
    if (!pass) return;
    if (pass.error) {
      this.landed = null;
      for (const p of pass.group) p.reject(pass.error);
      return;
    }
    const { maxBatch } = this.opts;
    const live = this.live;
    const room = maxBatch - live;
    if (room <= 0) return;
    if (pass.group.length > room && room < Math.max(1, Math.ceil(maxBatch / 4)) && live >= maxBatch / 2) return;
    let joining = pass;
    if (pass.group.length > room) {
      const [head, rest] = splitPass(pass, room, this.bundle.config.dims, this.pool);
      joining = head;
      this.landed = rest;
    } else this.landed = null;
    this.compact(true);
    try {
      this.join(joining);
    } catch (e) {
      for (const p of joining.group) p.reject(e);
    }
  }

  /** A group's rows join the batch, their visual states copied in after the running batch's. */
  private join(landed: VisionPass): void {
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    // Unread lines count their pass under the id the rest of it joins with (or that no other pass will take).
    const unread = withoutUnread(landed, this.nextGroup + 1, this.bundle, this.pool);
    const pass = withoutTooLong(unread, this.bundle, this.space, this.pool);
    if (!pass.group.length) {
      this.nextGroup++;
      return;
    }
    this.nextGroup++;
    const seqs = sequencesFor(this.bundle, pass, this.nextGroup, () => this.nextId++, this.policies);
    const { chunks } = pass;
    // The chunks join the running batch in one copy.
    const joining = Boolean(this.cache && this.vis && this.seqs.length);
    const parts = joining && this.vis ? [this.vis, ...chunks] : chunks;
    const vis = parts.length === 1 ? parts[0] : concatVisual(parts, nLayers, nHeads, headDim, this.pool);
    if (vis !== this.vis) this.dropVisual();
    // Copied into the batch: a joining part the pool made (a partial join's rows) goes back to it.
    if (vis !== chunks[0]) for (const c of chunks) releaseVisual(c, this.pool);
    if (!joining || !this.cache) {
      this.cache?.release();
      this.cache = new KvCache(nLayers, nHeads, headDim, seqs.length, undefined, this.pool);
      this.vis = vis;
      this.seqs = seqs;
    } else {
      this.cache.addRows(seqs.length);
      this.vis = vis;
      this.seqs = [...this.seqs, ...seqs];
    }
  }

  /** Drop finished rows from the batch (copies the caches, so only when it pays or when forced). */
  private compact(force: boolean): void {
    if (!this.cache || !this.vis) return;
    const keep = this.seqs.map((s, i) => (s.done ? -1 : i)).filter((i) => i >= 0);
    const gone = this.seqs.length - keep.length;
    if (!gone || (!force && gone < Math.max(1, this.seqs.length / 4))) return;
    if (!keep.length) {
      this.seqs = [];
      this.cache.release();
      this.cache = null;
      this.dropVisual();
      return;
    }
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    this.cache.keepRows(keep);
    const kept = keepVisualRows(this.vis, keep, nLayers, nHeads, headDim, this.pool);
    this.dropVisual();
    this.vis = kept;
    this.seqs = keep.map((i) => this.seqs[i]);
  }

  /**
   * Reject the lines in the batch and start clean (their buffers are left to the GC: a forward may have failed
   * mid-use).
   */
  private failBatch(e: unknown): void {
    for (const s of this.seqs) if (!s.done) s.p.reject(e);
    this.seqs = [];
    this.cache = null;
    this.vis = null;
  }

  /** The batch's visual state is no longer read: its buffers go back to the pool. */
  private dropVisual(): void {
    if (this.vis) releaseVisual(this.vis, this.pool);
    this.vis = null;
  }

  private finish(s: Sequence, error?: unknown): void {
    s.done = true;
    s.p.task.drafter.release?.(s);
    s.p.task.verifier.release?.(s.id);
    if (error) {
      s.p.reject(error);
      return;
    }
    s.context.addLine(s.tokens, this.bundle.config.specialIds.eos);
    // The batch's visual state still holds this row (finished rows leave it only at the next compaction).
    s.p.resolve(decodedOutput(s, this.vis, this.seqs.indexOf(s), this.bundle, this.space));
  }

  /** One decoder step, stage by stage (step/record.ts says what each stage hands on). */
  private async step(): Promise<void> {
    for (const s of this.seqs) {
      if (!s.done && s.p.task.signal?.aborted) this.finish(s, new EngineError('CANCELLED', 'decoding was cancelled'));
    }
    if (!this.live) {
      this.compact(true);
      return; // everything in the batch was cancelled: no forward to run
    }
    const ctx: StepContext = {
      bundle: this.bundle,
      positions: this.positions,
      pool: this.pool,
      cache: this.cache as KvCache,
      vis: this.vis as VisualState,
      costs: this.costs.table,
      overheadPerRow: this.costs.overheadPerRow,
      draftMsPerTokenRow: this.costs.draftMsPerTokenRow,
    };
    const rec = plan(ctx, this.seqs);
    await propose(ctx, rec);
    await forward(ctx, rec);
    this.forwards++;
    verify(ctx, rec);
    emit(rec, (s, e) => this.finish(s, e), this.observers);
    this.compact(false);
    this.costs.stepDone(rec);
  }
}
