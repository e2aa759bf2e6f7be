/**
 * Continuous batching of line sequences. Lines join the running batch at any step (after one vision pass
 * for the group that joins) and leave it when they finish. Every step, each line's drafter proposes, one
 * decoder forward carries every line's [last token, ...draft] (ragged: padded, masked, positioned by depth),
 * each line's verifier decides, and the KV cache commits what was kept. Drafter, verifier and draft length
 * are per line, so requests with different strategies share forwards.
 */
import type { Bundle } from './bundle.js';
import type { DocumentContext } from './document-context.js';
import { depths, type Draft, type ForwardView, isAncestor, leavesOf, parentsOf, probability, type RowLogits } from './draft.js';
import { readCosts, writeCosts } from './cost-cache.js';
import { CostTable, type CostPoint, DraftLengthPolicy, type DraftLengthSetting, MAX_DRAFT_LENGTH } from './draft-length.js';
import type { Drafter, SequenceView } from './drafters/drafter.js';
import { EngineError } from './errors.js';
import { KvCache } from './kv-cache.js';
import type { SpecMetrics } from './metrics.js';
import { checkCrop, type GrayCrop, packBatch } from './preprocess.js';
import { type PositionRule, positionRule, withForbidden } from './positions.js';
import { decoderStep } from './step.js';
import type { VerifiedLine, Verifier } from './verifiers/verifier.js';
import { gatherVisual, nextSelection, REFRESH_BELOW, REFRESH_EVERY } from './focal.js';
import { FloatPool } from './float-pool.js';
import { concatVisual, ctcGreedy, gatherRegions, keepVisualRows, releaseVisual, runVision, type VisualState } from './vision.js';

/** Most lines in one vision pass (see Scheduler.startVision). */
const VISION_CHUNK = 8;

export interface LineTask {
  /** A line: its crop. A region (region bundles only): its lines' crops, top to bottom, read as one sequence. */
  crops: readonly GrayCrop[];
  drafter: Drafter;
  verifier: Verifier;
  draftLength: DraftLengthSetting;
  context: DocumentContext;
  metrics: SpecMetrics;
  /** Share of the line's visual tokens each step attends to (1 = all; less = focal pruning). */
  visualKeep?: number;
  /** Newly committed tokens of this line, and which of them came from an accepted draft. */
  onTokens?: (tokens: readonly number[], fromDraft: readonly boolean[], drafted: number) => void;
  signal?: AbortSignal;
}

export interface LineOutput {
  ids: number[];
  ctc: number[];
  /** Mean probability the model gave each committed token (a line's confidence). */
  confidence: number;
  /** The vision pass this line was admitted with (several lines share one), and what it took. */
  visionGroup: number;
  visionMs: number;
}

/** A vision pass in flight: its lines (narrowest first) and, once settled, their visual states or its error. */
interface VisionPass {
  group: Pending[];
  /** One row per member of the group, in its order (a region's lines gathered into its row). */
  chunks: VisualState[];
  /** Each member's greedy CTC reading (a region's lines joined by line breaks). */
  ctc: number[][];
  error: unknown;
  settled: boolean;
  ms: number;
  result: Promise<void>;
}

interface Pending {
  task: LineTask;
  resolve: (o: LineOutput) => void;
  reject: (e: unknown) => void;
}

class Sequence implements SequenceView {
  tokens: number[] = [];
  /** Text position of `last` (BOS at 0; in a region bundle a line break opens the next line's positions). */
  pos = 0;
  probSum = 0;
  budget = 0;
  done = false;
  /** Focal pruning: the visual columns the next step attends to (null: all of them), and when it last saw all. */
  focal: number[] | null = null;
  stepsSinceFull = 0;
  readonly policy: DraftLengthPolicy;

  constructor(
    readonly id: number,
    readonly p: Pending,
    readonly ctc: number[],
    public last: number,
    readonly limit: number,
    readonly visionGroup: number,
    readonly visionMs: number,
    readonly real: number,
    policy: DraftLengthPolicy,
  ) {
    this.policy = policy;
  }

  get context(): DocumentContext {
    return this.p.task.context;
  }

  get tree(): boolean {
    return this.p.task.verifier.trees;
  }

  /** Decoder state at the position that decided `last` (drafters that run a head start from it). */
  hidden: Float32Array | null = null;
  /** The focal layers' attention over every visual column at that position (routed drafters read it). */
  attention: Float32Array | null = null;
  /** Where `last` will be fed; set by the scheduler before drafting. */
  position = 0;
  /** The scheduler's row for this line and its current visual state, set before drafting. */
  row = 0;
  vis: { state: VisualState; layers: number; heads: number; headDim: number } | null = null;

  lastLayerVisual(): { k: Float32Array; v: Float32Array; mask: Float32Array; visual: number } {
    const v = this.vis;
    if (!v) throw new Error('no visual state for this line yet');
    const { state, layers, heads, headDim } = v;
    const per = heads * state.visual * headDim;
    // [L, B, H, V, dh]: one row of one layer is contiguous.
    const off = ((layers - 1) * state.batch + this.row) * per;
    return { k: state.k.subarray(off, off + per), v: state.v.subarray(off, off + per), mask: state.mask.subarray(this.row * state.visual, (this.row + 1) * state.visual), visual: state.visual };
  }
}

export interface SchedulerOptions {
  /** Most lines decoded in one forward; may be changed between reads. */
  maxBatch: number;
}

/** One decoder forward, as observers (metrics exporters) see it. */
export interface ForwardObservation {
  ms: number;
  /** Lines in the batch, and the tokens fed per line (1 + the longest draft). */
  rows: number;
  width: number;
  /** Tokens committed across the batch by this forward. */
  committed: number;
}

export class Scheduler {
  private queue: Pending[] = [];
  private seqs: Sequence[] = [];
  private cache: KvCache | null = null;
  private vis: VisualState | null = null;
  private loop: Promise<void> | null = null;
  private nextId = 1;
  private nextGroup = 0;
  private costs: CostTable | null = null;
  private calibrating: Promise<CostTable> | null = null;
  private vision: VisionPass | null = null;
  /** Set by shutdown(): the error every line still in the engine, and every later read, fails with. */
  private stopping: Error | null = null;
  /**
   * What a step costs besides its forward and its drafting (building inputs, verifying, committing, compacting),
   * per row, measured as steps run: it is paid once per forward, so it makes long drafts cheaper than the
   * forward-cost table alone says (at batch 32 it is comparable to the forward itself).
   */
  private overheadPerRow = 0;
  /**
   * Per drafter (by name): what drafting one token costs per drafting row, measured as steps run. A model-backed
   * head (mtp, pmtp, routed) runs once per depth, which on a small model is a real share of a step: the auto
   * draft length has to count it, or it drafts deeper than pays.
   */
  private readonly draftMsPerTokenRow = new Map<string, number>();
  /** The batch's visual state and text cache are rebuilt as lines join and leave: on recycled buffers. */
  private readonly pool = new FloatPool();
  /**
   * Visual states already computed for a crop (a page's orientation check reads its longest lines before the page
   * is read): a line whose crop is here joins the batch without a second vision pass. Weak, and taken on use, so
   * a crop never read (a page found turned and cropped again) costs nothing once dropped.
   */
  private readonly seen = new WeakMap<GrayCrop, VisualState>();

  private readonly positions: PositionRule;

  constructor(private readonly bundle: Bundle, readonly opts: SchedulerOptions) {
    this.positions = positionRule(bundle);
  }

  /** Decoder forwards run since the engine opened (all requests together). */
  forwards = 0;

  /** Called after every decoder forward; an observer that throws is ignored. */
  readonly observers = new Set<(o: ForwardObservation) => void>();

  /** Lines waiting plus lines in the batch. */
  get load(): { queued: number; active: number } {
    // Lines in the vision pass count as active (they hold a place in the batch) unless cancelled: those leave
    // when the pass lands.
    const passing = this.vision?.group.filter((p) => !p.task.signal?.aborted).length ?? 0;
    return { queued: this.queue.length, active: this.live + passing };
  }

  get costTable(): CostTable | null {
    return this.costs;
  }

  read(task: LineTask): Promise<LineOutput> {
    if (this.stopping) return Promise.reject(this.stopping);
    const { height, widthMultiple, maxWidth } = this.bundle.config.image;
    const region = this.bundle.config.region;
    if (task.crops.length === 0) throw new EngineError('INVALID_CROP', 'a read needs at least one line crop');
    if (task.crops.length > 1 && !region) {
      throw new EngineError('REGIONS_UNSUPPORTED', `bundle ${this.bundle.config.name} reads single lines; multi-line regions need a region bundle`);
    }
    if (region && task.crops.length > region.maxLines) {
      throw new EngineError('INVALID_CROP', `a region holds at most ${region.maxLines} lines in bundle ${this.bundle.config.name}, got ${task.crops.length}`);
    }
    for (const crop of task.crops) checkCrop(crop, { height, widthMultiple, maxWidth });
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
    // Concurrent requests share one calibration.
    this.calibrating ??= this.measureCosts().catch((e: unknown) => {
      this.calibrating = null;
      throw e;
    });
    return this.calibrating;
  }

  private async measureCosts(): Promise<CostTable> {
    const cached = readCosts(this.bundle);
    if (cached) {
      this.costs = new CostTable(cached);
      return this.costs;
    }
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    const { height, widthMultiple, maxWidth } = this.bundle.config.image;
    const points: CostPoint[] = [];
    const crop: GrayCrop = { width: 400, height, data: new Uint8Array(400 * height).fill(255) };
    for (const batch of [1, 8, 32].filter((b) => b <= Math.max(1, this.opts.maxBatch) || b === 1)) {
      const vis = await runVision(this.bundle, packBatch(Array.from({ length: batch }, () => crop), { height, widthMultiple, maxWidth }));
      const cache = new KvCache(nLayers, nHeads, headDim, batch);
      cache.reserve(64);
      cache.lengths.fill(40);
      for (const perRow of [1, 2, 4, 8, 16, 32]) {
        const input = {
          tokens: Array.from({ length: batch }, () => Array.from({ length: perRow }, () => 40)),
          positions: Array.from({ length: batch }, () => Array.from({ length: perRow }, (_, i) => 40 + i)),
        };
        await decoderStep(this.bundle, cache, vis, input); // warm-up
        const times: number[] = [];
        for (let r = 0; r < 3; r++) {
          const t0 = performance.now();
          await decoderStep(this.bundle, cache, vis, input);
          times.push(performance.now() - t0);
        }
        points.push({ batch, perRow, ms: times.sort((a, b) => a - b)[1] });
      }
    }
    this.costs = new CostTable(points);
    writeCosts(this.bundle, points);
    return this.costs;
  }

  private kick(): void {
    if (this.loop) return;
    this.loop = this.run()
      .catch((e: unknown) => {
        // Nothing may escape the loop: fail what is in flight and waiting, keep the engine alive.
        for (const p of this.queue.splice(0)) p.reject(e);
        for (const p of this.vision?.group ?? []) p.reject(e);
        this.vision = null;
        this.failBatch(e);
      })
      .finally(() => {
        this.loop = null;
        if (this.queue.length || this.live) this.kick();
      });
  }

  /**
   * Stop: lines in flight and waiting fail with `error` at the next step boundary; resolves when the loop has
   * ended, so the sessions can be released under nothing. Later reads fail with `error` at once.
   */
  async shutdown(error: Error): Promise<void> {
    this.stopping = error;
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
    while (this.queue.length || this.live || this.vision) {
      if (this.stopping) {
        const e = this.stopping;
        for (const s of this.seqs) if (!s.done) this.finish(s, e);
        for (const p of this.queue.splice(0)) p.reject(e);
        if (this.vision) {
          await this.vision.result; // the worker finishes the pass it started; its lines fail with the rest
          for (const p of this.vision.group) p.reject(e);
          this.vision = null;
        }
        break;
      }
      this.startVision();
      if (this.vision?.settled) this.joinVision();
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

  /** Keep each crop's row of a vision pass run outside the scheduler, for when the crop is read. */
  remember(crops: readonly GrayCrop[], state: VisualState): void {
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    crops.forEach((crop, r) => this.seen.set(crop, keepVisualRows(state, [r], nLayers, nHeads, headDim)));
  }

  /**
   * Start the vision pass for the lines waiting, if there is room for them and no pass is in flight. It runs in
   * the vision worker while the batch goes on decoding; the lines join at a step boundary once it lands.
   * The group is read narrowest first in chunks of similar widths: each chunk is padded only to its own widest
   * line (a page's headings and short last lines no longer cost a full-width pass).
   */
  private startVision(): void {
    if (this.vision) return;
    this.queue = this.queue.filter((p) => {
      if (!p.task.signal?.aborted) return true;
      p.reject(new EngineError('CANCELLED', 'decoding was cancelled'));
      return false;
    });
    const live = this.live;
    const room = this.opts.maxBatch - live;
    if (!this.queue.length || room <= 0) return;
    // Joining copies the batch's caches (compaction, then the new rows): admit in groups, not a line at a time
    // as single slots free up, unless the batch is running low.
    if (live >= this.opts.maxBatch / 2 && room < Math.max(1, Math.ceil(this.opts.maxBatch / 4)) && this.queue.length >= room) return;
    const { height, widthMultiple, maxWidth } = this.bundle.config.image;
    const widest = (p: Pending): number => Math.max(...p.task.crops.map((c) => c.width));
    let group = this.queue.splice(0, room).sort((a, b) => widest(a) - widest(b));
    const regions = group.some((p) => p.task.crops.length > 1);
    // Lines whose visual states are known already come first, as one chunk of their own.
    const known = regions ? [] : group.filter((p) => this.seen.has(p.task.crops[0]));
    const passes: Promise<VisualState>[] = [];
    if (known.length) {
      const { nLayers, nHeads, headDim } = this.bundle.config.dims;
      const states = known.map((p) => this.seen.get(p.task.crops[0]) as VisualState);
      for (const p of known) this.seen.delete(p.task.crops[0]);
      passes.push(Promise.resolve(states.length === 1 ? states[0] : concatVisual(states, nLayers, nHeads, headDim, this.pool)));
      group = [...known, ...group.filter((p) => !known.includes(p))];
    }
    // Every other crop of the group, narrowest first; a region's lines go through the pass with their line index.
    const entries = group.slice(known.length).flatMap((p, member) => p.task.crops.map((crop, line) => ({ member, line, crop })));
    if (regions) entries.sort((a, b) => a.crop.width - b.crop.width);
    for (let i = 0; i < entries.length; i += VISION_CHUNK) {
      const chunk = entries.slice(i, i + VISION_CHUNK);
      passes.push(runVision(this.bundle, packBatch(chunk.map((e) => e.crop), { height, widthMultiple, maxWidth }, regions ? chunk.map((e) => e.line) : undefined)));
    }
    const t0 = performance.now();
    const pass: VisionPass = { group, chunks: [], ctc: [], error: null, settled: false, ms: 0, result: Promise.resolve() };
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    const { bos, ctcBlank } = this.bundle.config.specialIds;
    pass.result = Promise.all(passes).then(
      (chunks) => {
        const read = chunks.map((c) => ctcGreedy(c, ctcBlank));
        if (!regions) {
          pass.chunks = chunks;
          pass.ctc = read.flat();
          return;
        }
        // Each member's lines, in line order, as (pass, row) pairs.
        const members = group.map(() => [] as { state: number; row: number; line: number }[]);
        entries.forEach((e, i) => members[e.member].push({ state: Math.floor(i / VISION_CHUNK), row: i % VISION_CHUNK, line: e.line }));
        for (const m of members) m.sort((a, b) => a.line - b.line);
        pass.chunks = [gatherRegions(chunks, members, nLayers, nHeads, headDim, this.pool)];
        for (const c of chunks) releaseVisual(c, this.pool);
        pass.ctc = members.map((m) => m.flatMap((x, j) => (j ? [bos, ...read[x.state][x.row]] : read[x.state][x.row])));
      },
      (e: unknown) => {
        pass.error = e;
      },
    ).finally(() => {
      pass.ms = performance.now() - t0;
      pass.settled = true;
    });
    this.vision = pass;
  }

  /** The landed vision pass's lines join the batch (or fail, if the pass failed; the batch is untouched). */
  private joinVision(): void {
    const pass = this.vision;
    if (!pass) return;
    this.vision = null;
    if (pass.error) {
      for (const p of pass.group) p.reject(pass.error);
      return;
    }
    this.compact(true);
    try {
      this.join(pass);
    } catch (e) {
      for (const p of pass.group) p.reject(e);
    }
  }

  /** A group's rows join the batch, their visual states copied in after the running batch's. */
  private join(pass: VisionPass): void {
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    const { group, chunks, ms, ctc } = pass;
    const { bos } = this.bundle.config.specialIds;
    const real = chunks.flatMap((c) => Array.from({ length: c.batch }, (_, r) => {
      let n = 0;
      for (let t = 0; t < c.visual; t++) n += c.mask[r * c.visual + t];
      return n;
    }));
    const maxNew = this.bundle.config.decoding.maxNewTokens;
    this.nextGroup++;
    // No line holds more characters than visual tokens; the cap also stops a runaway repetition.
    const seqs = group.map((p, r) => new Sequence(this.nextId++, p, ctc[r], bos, Math.min(maxNew, real[r] + 4 * p.task.crops.length), this.nextGroup, ms, real[r], this.policyFor(p.task)));
    // The chunks join the running batch in one copy.
    const joining = Boolean(this.cache && this.vis && this.seqs.length);
    const parts = joining && this.vis ? [this.vis, ...chunks] : chunks;
    const vis = parts.length === 1 ? parts[0] : concatVisual(parts, nLayers, nHeads, headDim, this.pool);
    if (vis !== this.vis) this.dropVisual();
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

  /** One draft-length policy per request (its drafter instance), shared by its lines. */
  private readonly policies = new WeakMap<Drafter, Map<DraftLengthSetting, DraftLengthPolicy>>();

  private policyFor(task: LineTask): DraftLengthPolicy {
    let bySetting = this.policies.get(task.drafter);
    if (!bySetting) {
      bySetting = new Map();
      this.policies.set(task.drafter, bySetting);
    }
    let p = bySetting.get(task.draftLength);
    if (!p) {
      p = new DraftLengthPolicy(task.draftLength);
      bySetting.set(task.draftLength, p);
    }
    return p;
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

  /** Reject the lines in the batch and start clean (their buffers are left to the GC: a forward may have failed mid-use). */
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

  /** Row r of the batch as a verifier sees it: its id, and its CTC logits read from the visual state when asked. */
  private verifiedLine(s: Sequence, vis: VisualState, r: number): VerifiedLine {
    return {
      id: s.id,
      ctc: () => {
        const vocab = vis.ctcLogits.length / (vis.batch * vis.visual);
        return { logits: vis.ctcLogits.subarray(r * vis.visual * vocab, (r * vis.visual + s.real) * vocab), frames: s.real, vocab };
      },
    };
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
    s.p.resolve({ ids: s.tokens, ctc: s.ctc, confidence: s.tokens.length ? s.probSum / s.tokens.length : 0, visionGroup: s.visionGroup, visionMs: s.visionMs });
  }

  /**
   * Choose the visual columns row r attends to next, from the focal layers' attention over what it saw this
   * step (at the positions whose outputs were used). A full step follows an uncertain token, and comes
   * every REFRESH_EVERY steps, so the selection re-anchors.
   */
  private refocus(s: Sequence, r: number, visAttn: Float32Array, t: number, cols: number[] | null, full: boolean, used: number, minProb: number): void {
    const keep = s.p.task.visualKeep ?? 1;
    if (keep >= 1) return;
    const seen = cols ?? Array.from({ length: s.real }, (_, i) => i);
    const width = visAttn.length / (this.seqs.length * t);
    s.p.task.metrics.visual(seen.length / Math.max(1, s.real));
    s.stepsSinceFull = full ? 0 : s.stepsSinceFull + 1;
    if (minProb < REFRESH_BELOW || s.stepsSinceFull >= REFRESH_EVERY) {
      s.focal = null;
      return;
    }
    const mass = seen.map((_, j) => {
      let m = 0;
      for (let i = 0; i < used && i < t; i++) m += visAttn[(r * t + i) * width + j];
      return m;
    });
    s.focal = nextSelection(seen, mass, s.real, keep);
  }

  private async step(): Promise<void> {
    const cache = this.cache as KvCache;
    const vis = this.vis as VisualState;
    const { eos, pad, mask } = this.bundle.config.specialIds;
    const live = this.seqs.filter((s) => !s.done);
    for (const s of live) {
      if (s.p.task.signal?.aborted) this.finish(s, new EngineError('CANCELLED', 'decoding was cancelled'));
    }
    const batch = this.seqs.filter((s) => !s.done).length;
    if (batch === 0) {
      this.compact(true);
      return; // everything in the batch was cancelled: no forward to run
    }
    const stepStart = performance.now();
    let draftMs = 0;
    for (const s of this.seqs) {
      const drafter = s.p.task.drafter;
      const draftCost = (this.draftMsPerTokenRow.get(drafter.name) ?? 0) * batch;
      const length = drafter.gatedDepth && s.policy.setting === 'auto'
        ? drafter.gatedDepth
        : s.policy.next(batch, this.costs, (k) => drafter.forwardWidth?.(k) ?? k, this.overheadPerRow * batch, draftCost);
      s.budget = s.done || drafter.name === 'none' ? 0 : Math.min(length, s.limit - s.tokens.length);
    }
    // Drafts, asked of each drafter for its own sequences at once.
    const drafts: Draft[] = this.seqs.map(() => ({ tokens: [] }));
    const byDrafter = new Map<Drafter, number[]>();
    this.seqs.forEach((s, r) => {
      if (s.done || s.budget <= 0) return;
      const rows = byDrafter.get(s.p.task.drafter) ?? [];
      rows.push(r);
      byDrafter.set(s.p.task.drafter, rows);
    });
    for (const [drafter, rows] of byDrafter) {
      for (const r of rows) {
        const s = this.seqs[r];
        s.row = r;
        s.position = s.pos;
        const { nLayers: layers, nHeads: heads, headDim } = this.bundle.config.dims;
        s.vis = { state: vis, layers, heads, headDim };
      }
      const t0 = performance.now();
      const proposed = await drafter.propose(rows.map((r) => this.seqs[r]));
      const ms = performance.now() - t0;
      draftMs += ms;
      for (const m of new Set(rows.map((r) => this.seqs[r].p.task.metrics))) m.drafting(ms);
      rows.forEach((r, i) => (drafts[r] = clip(proposed[i], this.seqs[r].budget, this.seqs[r].tree)));
      // A head that runs once per depth costs about ms / depth per drafted token, shared by the rows drafting.
      const depth = Math.max(...proposed.map((d) => d.tokens.length));
      if (depth > 0) {
        const perTokenRow = ms / depth / rows.length;
        const was = this.draftMsPerTokenRow.get(drafter.name);
        this.draftMsPerTokenRow.set(drafter.name, was === undefined ? perTokenRow : 0.9 * was + 0.1 * perTokenRow);
      }
    }
    const layout = drafts.map((d, r) => layoutRow(d, this.seqs[r].pos, this.positions));
    const t = Math.max(...layout.map((l) => l.width));
    const tokens = this.seqs.map((s, r) => {
      const row = [s.last, ...drafts[r].tokens, ...Array<number>(layout[r].masks).fill(mask)];
      return [...row, ...Array<number>(t - row.length).fill(pad)];
    });
    const positions = layout.map((l) => [...l.positions, ...Array<number>(t - l.positions.length).fill(l.positions[0])]);
    const attend = (r: number, i: number, j: number): boolean => layout[r].attend(i, j);
    // Focal pruning: rows that asked for it attend only to their selected visual columns this step.
    const { nLayers, nHeads, headDim } = this.bundle.config.dims;
    const fullRows = this.seqs.map((s) => s.focal === null);
    const pruning = this.seqs.some((s) => !s.done && s.focal !== null);
    // A pruned forward's cost includes gathering its columns.
    const t0 = performance.now();
    const gathered = pruning
      ? gatherVisual(vis, this.seqs.map((s) => (s.done ? [0] : s.focal)), nLayers, nHeads, headDim, this.pool)
      : null;
    const out = await decoderStep(this.bundle, cache, gathered?.state ?? vis, { tokens, positions, attend });
    if (gathered) this.pool.give(gathered.state.k, gathered.state.v);
    const ms = performance.now() - t0;
    this.forwards++;

    const picks: number[][] = this.seqs.map(() => []);
    const touched = new Set<SpecMetrics>();
    let committedTotal = 0;
    const rows = this.seqs.filter((s) => !s.done).length;
    this.seqs.forEach((s, r) => {
      if (s.done) return;
      const draft = drafts[r];
      const lines = s.p.task.crops.length;
      const view: RowLogits = {
        at: (i) => withForbidden(out.logits.subarray((r * t + i) * out.vocab, (r * t + i + 1) * out.vocab), this.positions.forbidden(layout[r].positions[i], lines)),
      };
      const verdict = s.p.task.verifier.verify(draft, view, this.verifiedLine(s, vis, r));
      const forward: ForwardView = {
        after: (node) => view.at(node + 1),
        lookahead: (node) => layout[r].blockOf(node).map((i) => view.at(i)),
      };
      picks[r] = [0, ...verdict.accepted.map((i) => i + 1)];
      const committed = [...verdict.accepted.map((i) => draft.tokens[i]), verdict.bonus];
      const fresh: number[] = [];
      const fromDraft: boolean[] = [];
      let finished = false;
      let minProb = 1;
      for (let i = 0; i < committed.length; i++) {
        if (committed[i] === eos) {
          finished = true;
          break;
        }
        // Token i was decided at the fed token (i = 0) or right after accepted draft token i - 1.
        const prob = probability(view.at(i === 0 ? 0 : verdict.accepted[i - 1] + 1), committed[i]);
        s.probSum += prob;
        minProb = Math.min(minProb, prob);
        fresh.push(committed[i]);
        fromDraft.push(i < verdict.accepted.length);
        if (s.tokens.length + fresh.length >= s.limit) {
          finished = true;
          break;
        }
      }
      s.tokens.push(...fresh);
      for (const tok of committed) s.pos = this.positions.next(s.pos, tok);
      committedTotal += committed.length;
      // The position that decided the bonus token: where a drafting head starts next step.
      const at = verdict.accepted.length ? verdict.accepted[verdict.accepted.length - 1] + 1 : 0;
      if (s.p.task.drafter.usesHiddenState) {
        const d = out.hidden.length / (this.seqs.length * t);
        s.hidden = out.hidden.slice((r * t + at) * d, (r * t + at + 1) * d);
      }
      if (s.p.task.drafter.usesAttention) {
        const width = out.visAttn.length / (this.seqs.length * t);
        const cols = gathered ? gathered.cols[r] : null;
        const full = new Float32Array(vis.visual);
        for (let j = 0; j < width && j < (cols?.length ?? vis.visual); j++) full[cols ? cols[j] : j] = out.visAttn[(r * t + at) * width + j];
        s.attention = full;
      }
      this.refocus(s, r, out.visAttn, t, gathered ? gathered.cols[r] : null, fullRows[r], verdict.accepted.length + 1, minProb);
      s.last = verdict.bonus;
      const draftDepth = draft.tokens.length ? Math.max(...depths(draft)) : 0;
      s.p.task.metrics.row(draftDepth, draft.tokens.length, verdict.accepted.length, committed.length);
      touched.add(s.p.task.metrics);
      s.policy.observe(draftDepth, verdict.accepted.length);
      s.p.task.drafter.observe?.(s, draft, verdict, committed, forward);
      if (fresh.length && s.p.task.onTokens) {
        try {
          s.p.task.onTokens(fresh, fromDraft, draftDepth);
        } catch (e) {
          // A caller's callback that throws ends its own line, not the batch.
          this.finish(s, e);
          return;
        }
      }
      if (finished) this.finish(s);
    });
    cache.commit(out.newK, out.newV, t, picks);
    for (const m of touched) m.forward(ms);
    for (const o of this.observers) {
      try {
        o({ ms, rows, width: t, committed: committedTotal });
      } catch {
        // metrics must never break decoding
      }
    }
    this.compact(false);
    const overhead = Math.max(0, performance.now() - stepStart - draftMs - ms) / Math.max(1, rows);
    this.overheadPerRow = this.overheadPerRow === 0 ? overhead : 0.9 * this.overheadPerRow + 0.1 * overhead;
  }
}

/** Keep a drafter's proposal within its budget (tree: depth) and well formed. */
function clip(d: Draft, budget: number, tree: boolean): Draft {
  const lookahead = Math.max(0, Math.min(MAX_DRAFT_LENGTH, Math.floor(d.lookahead ?? 0)));
  const clipped = clipTokens(d, budget, tree);
  if (!lookahead) return clipped;
  const inner = Math.max(0, Math.min(lookahead, Math.floor(d.lookaheadInner ?? 0)));
  return inner ? { ...clipped, lookahead, lookaheadInner: inner } : { ...clipped, lookahead };
}

function clipTokens(d: Draft, budget: number, tree: boolean): Draft {
  if (!d.parents || !tree) {
    // A verifier that takes chains gets a chain: the first root path of a tree.
    if (d.parents && !tree) {
      const chain: number[] = [];
      let node = -1;
      for (let i = 0; i < d.tokens.length; i++) {
        if (d.parents[i] === node) {
          chain.push(d.tokens[i]);
          node = i;
        }
      }
      return { tokens: chain.slice(0, budget) };
    }
    return { tokens: d.tokens.slice(0, budget) };
  }
  const dep = depths(d);
  const keep = d.tokens.map((_, i) => i).filter((i) => dep[i] <= budget && (d.parents as number[])[i] < i);
  const index = new Map(keep.map((old, i) => [old, i]));
  return {
    tokens: keep.map((i) => d.tokens[i]),
    parents: keep.map((i) => {
      const p = (d.parents as number[])[i];
      return p < 0 ? -1 : (index.get(p) ?? -1);
    }),
  };
}

/**
 * Where a row's tokens sit in one forward: [fed token, ...draft, ...a mask block after the fed token and after
 * each leaf, and a shorter one after every other draft token with lookaheadInner], their text positions, and
 * who may see whom. The fed token and the draft attend as a chain or tree (each token its ancestors); a mask
 * block sees the fed token, the path to the token it follows and itself; nothing sees a block, so the draft's
 * logits are exactly what they would be without one.
 */
interface RowLayout {
  width: number;
  /** Mask positions after the draft (all its blocks). */
  masks: number;
  positions: number[];
  attend(i: number, j: number): boolean;
  /** Indices in the row of the block after draft token `node` (-1: the fed token; [] when it has none). */
  blockOf(node: number): number[];
}

function layoutRow(d: Draft, pos0: number, rule: PositionRule): RowLayout {
  const n = d.tokens.length;
  const parents = parentsOf(d);
  const lookahead = d.lookahead ?? 0;
  const inner = lookahead ? Math.min(lookahead, d.lookaheadInner ?? 0) : 0;
  // A block after the fed token too: when the draft's first token is rejected, that block was conditioned on
  // exactly the committed text, and its tail still lines up after a partly kept draft. With lookaheadInner, a
  // (shorter) block after every other draft token as well: whatever is kept, one block saw exactly it.
  const leaves = new Set(n ? leavesOf(d) : []);
  const sized: [number, number][] = !lookahead ? [] : [[-1, lookahead]];
  for (let i = 0; i < n; i++) {
    if (leaves.has(i)) sized.push([i, lookahead]);
    else if (inner) sized.push([i, inner]);
  }
  // Each draft token's position follows its parent's (parents come first in a draft).
  const positions = [pos0];
  for (let i = 0; i < n; i++) positions.push(rule.next(positions[parents[i] + 1], d.tokens[i]));
  const owner: number[] = []; // for each block position (row index 1 + n + m), the token it follows
  const start = new Map<number, [number, number]>(); // node -> [row index of its block, block length]
  for (const [node, size] of sized) {
    const base = positions[node + 1];
    start.set(node, [1 + n + owner.length, size]);
    for (let k = 0; k < size; k++) {
      positions.push(rule.block(base, k));
      owner.push(node);
    }
  }
  const width = 1 + n + owner.length;
  return {
    width,
    masks: owner.length,
    positions,
    attend(i, j) {
      if (i === j) return true;
      if (i >= width || j >= width) return false; // padding sees nothing new and is seen by nothing
      if (j > n) return i > n && owner[i - 1 - n] === owner[j - 1 - n]; // a block is seen by itself only
      if (j === 0) return true; // everything follows the fed token
      if (i === 0) return false;
      const leaf = i > n ? owner[i - 1 - n] : i - 1;
      return leaf >= 0 && isAncestor(parents, j - 1, leaf);
    },
    blockOf(node) {
      const at = start.get(node);
      return at ? Array.from({ length: at[1] }, (_, k) => at[0] + k) : [];
    },
  };
}
