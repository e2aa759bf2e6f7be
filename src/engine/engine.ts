/**
 * The engine's front door: open a bundle, then read line crops with the decoding strategy each request
 * chooses. Lines of concurrent requests share the scheduler's batches; text comes back in the caller's order.
 */
import { type Bundle, closeBundle, DEFAULT_BUNDLE, loadBundle } from './bundle/bundle.js';
import { type Device, isGpu } from './bundle/device.js';
import type { Glyph } from './ctc/align.js';
import { ctcConfidence } from './ctc/confidence.js';
import { DraftingContext } from './strategies/drafting-context.js';
import { EngineError } from './errors.js';
import { scriptVerdict, type ScriptVerdict, UNJUDGED } from './ctc/script-gate.js';
import { SpecMetrics } from './decode/metrics.js';
import { oneScriptGlyphs, oneScriptReading, respeltIds } from './decode/mixed-scripts.js';
import { goldenCrops } from './bundle/warm-up.js';
import { type DecodingOptions, type UncheckedDecoding, resolveDecoding } from './strategies/options.js';
import { checkCrop, type GrayCrop, type ImageSpec } from './vision/preprocess.js';
import { createStrategies } from './strategies/registry.js';
import { type ForwardObservation, Scheduler, type SchedulerOptions } from './decode/scheduler.js';
import type { LineOutput } from './decode/sequence.js';
import { runVisionChunks } from './vision/visual-state.js';
import { type CropPiece, cutWideCrop, MAX_PIECES } from './vision/wide-crops.js';
import type { EngineOptions, LineReading, ReadMetrics, ReadOptions, RegionReading } from './engine-types.js';
import { type LineReader, readLine, type Tokens } from './read-line.js';
import { regionRuns, runTokens, spreadRuns } from './region-runs.js';

export type { EngineOptions, LineReading, ReadMetrics, ReadOptions, RegionReading } from './engine-types.js';

/**
 * Lines per decoder forward when the caller does not say. On CPU a forward's cost is mostly per row while the
 * batch's K/V, rebuilt as lines join and leave, grows with it, so narrow batches win (docs/benchmarks.md); a GPU
 * runs a batch's rows in parallel, so it gets wide ones (not yet measured on a real GPU).
 */
export function defaultMaxBatch(device: Device = 'cpu'): number {
  return isGpu(device) ? 32 : 8;
}

export class Engine {
  private readonly scheduler: Scheduler;
  private readonly pieces = new WeakMap<GrayCrop, CropPiece[]>();
  private closed = false;

  private constructor(
    readonly bundle: Bundle,
    opts: SchedulerOptions,
    private readonly readChars: number | undefined,
  ) {
    this.scheduler = new Scheduler(bundle, opts);
  }

  static async open(dir: string = DEFAULT_BUNDLE, opts: EngineOptions = {}): Promise<Engine> {
    const { idleReleaseMs, collect } = opts;
    const bundle = await loadBundle(dir, opts);
    const readChars = opts.readChars === null ? undefined : (opts.readChars ?? bundle.config.image.readChars);
    const engine = new Engine(
      bundle,
      { maxBatch: Math.max(1, opts.maxBatch ?? defaultMaxBatch(bundle.device)), idleReleaseMs, collect },
      readChars,
    );
    if (opts.warmUp ?? isGpu(bundle.device)) {
      try {
        await engine.warmUp();
      } catch (e) {
        await engine.close();
        throw e;
      }
    }
    return engine;
  }

  /**
   * Read the bundle's golden lines the ways a request reads: one vision pass, then decoder forwards of one new token
   * (plain decoding) and of several (the default drafter's), so each graph's kernels are compiled and its buffers
   * sized before the first request. Returns how long it took.
   */
  async warmUp(): Promise<number> {
    const t0 = performance.now();
    const crops = goldenCrops(this.bundle).filter((c) => c.width <= this.bundle.config.image.maxWidth);
    if (!crops.length) return 0;
    const plain = { drafter: 'none', verifier: 'greedy' } as const;
    for (const decoding of [undefined, plain])
      await this.read(
        crops.map((c) => [c]),
        { decoding, unreadScripts: false },
      );
    return performance.now() - t0;
  }

  /**
   * What a line crop must look like: the document layer scales crops to this. A line too long to read whole is read
   * in pieces of up to `readWidth` columns (vision/wide-crops.ts), so a crop may be MAX_PIECES times that wide.
   */
  get imageSpec(): ImageSpec {
    const { height, widthMultiple, maxWidth } = this.bundle.config.image;
    return { height, widthMultiple, maxWidth: this.readWidth < maxWidth ? MAX_PIECES * this.readWidth : maxWidth };
  }

  /** The widest piece of a line read in pieces: the bundle's readWidth, else (bundles that do not say) its maxWidth. */
  get readWidth(): number {
    const { maxWidth, readWidth } = this.bundle.config.image;
    return Math.min(maxWidth, readWidth ?? maxWidth);
  }

  /** A wide crop's pieces, cut once: the orientation check and the reading then share them (and their states). */
  private piecesOf(crop: GrayCrop): CropPiece[] {
    let pieces = this.pieces.get(crop);
    if (!pieces) {
      pieces = cutWideCrop(crop, this.readWidth, this.bundle.config.image.maxWidth);
      this.pieces.set(crop, pieces);
    }
    return pieces;
  }

  /** Most lines in one decoder forward. */
  get maxBatch(): number {
    return this.scheduler.opts.maxBatch;
  }

  set maxBatch(n: number) {
    this.scheduler.opts.maxBatch = Math.max(1, Math.floor(n));
  }

  /** Lines queued and in the batch, and decoder forwards run so far (all requests together). */
  get stats(): { queued: number; active: number; forwards: number; pooledBytes: number } {
    return { ...this.scheduler.load, forwards: this.scheduler.forwards, pooledBytes: this.scheduler.pooledBytes };
  }

  /** Watch every decoder forward (for metrics); returns the function that stops watching. */
  observeForwards(observer: (o: ForwardObservation) => void): () => void {
    this.scheduler.observers.add(observer);
    return () => this.scheduler.observers.delete(observer);
  }

  /**
   * Resolve decoding options against this bundle (throws INVALID_OPTIONS listing the choices): for the reads
   * readBlocks makes (regions with a region bundle, else lines) unless `regions` says which. Reads given
   * resolved options use them as they are.
   */
  resolve(decoding?: UncheckedDecoding, opts: { regions?: boolean } = {}): DecodingOptions {
    return resolveDecoding(decoding, this.bundle.config, { regions: opts.regions ?? this.readsRegions });
  }

  async readLines(
    crops: readonly GrayCrop[],
    opts: ReadOptions = {},
  ): Promise<{ lines: LineReading[]; metrics: ReadMetrics }> {
    const { lines, metrics } = await this.read(
      crops.map((c) => [c]),
      opts,
    );
    return { lines, metrics };
  }

  /**
   * Read multi-line regions (region bundles): each region's line crops, top to bottom, are read as one sequence,
   * the decoder attending to every line's visual tokens at once. Verifiers: greedy (the default here) or tree.
   */
  async readRegions(
    regions: readonly (readonly GrayCrop[])[],
    opts: ReadOptions = {},
  ): Promise<{ regions: RegionReading[]; metrics: ReadMetrics }> {
    const { lines, glyphs, metrics } = await this.read(
      regions,
      { ...opts, decoding: this.regionDecoding(opts.decoding) },
      true,
    );
    return {
      regions: lines.map((l, i) => ({
        ...l,
        lines: l.text.split('\n'),
        ...(glyphs[i] ? { lineGlyphs: glyphs[i] } : {}),
      })),
      metrics,
    };
  }

  /** Whether this bundle reads multi-line regions (readRegions, and readBlocks by regions). */
  get readsRegions(): boolean {
    return Boolean(this.bundle.config.region);
  }

  /** A region read's decoding: greedy unless told, and never a verifier that scores one line's CTC frames. */
  private regionDecoding(decoding: UncheckedDecoding | undefined): DecodingOptions {
    if (!this.bundle.config.region) {
      throw new EngineError(
        'REGIONS_UNSUPPORTED',
        `bundle ${this.bundle.config.name} reads single lines; multi-line regions need a region bundle`,
      );
    }
    return this.resolve(decoding, { regions: true });
  }

  /**
   * A page's lines, grouped by block, top to bottom. A line bundle reads every line on its own. A region bundle
   * reads each block's lines in runs of up to its maxLines as regions; a run whose reading has another number of
   * lines than it has crops (two lines merged, one split) is read again one line at a time, so every crop gets
   * its own text. Readings come back flat, in the blocks' order, one per crop.
   */
  async readBlocks(
    blocks: readonly (readonly GrayCrop[])[],
    opts: ReadOptions = {},
  ): Promise<{ lines: LineReading[]; metrics: ReadMetrics }> {
    const region = this.bundle.config.region;
    if (!region) return this.readLines(blocks.flat(), opts);
    const { runs, count } = regionRuns(blocks, region.maxLines, this.bundle.config.image.maxWidth);
    const metrics = opts.metrics ?? new SpecMetrics();
    const decoding = this.regionDecoding(opts.decoding);
    const read = await this.read(
      runs.map((r) => r.crops),
      {
        ...opts,
        evidence: undefined,
        metrics,
        decoding,
        onLine: undefined,
        onTokens: opts.onTokens ? runTokens(runs, opts.onTokens) : undefined,
      },
      true,
    );
    const lines: LineReading[] = new Array(count);
    const redo = spreadRuns(read, runs, this.bundle.tokenizer, lines);
    if (redo.length) {
      // With the regions' own verifier: a page's lines are read one way whether or not their run was re-read.
      const again = await this.read(
        redo.flatMap((k) => runs[k].crops.map((c) => [c])),
        { ...opts, evidence: undefined, decoding, metrics, onTokens: undefined, onLine: undefined },
        true,
      );
      let at = 0;
      for (const k of redo) runs[k].crops.forEach((_, j) => (lines[runs[k].first + j] = again.lines[at++]));
    }
    lines.forEach((l, i) => opts.onLine?.(i, l));
    return { lines, metrics: { lines: count, ...metrics.snapshot() } };
  }

  /** `regions`: the items are read with region decoding (a region bundle's lines, as well as its regions). */
  private async read(
    items: readonly (readonly GrayCrop[])[],
    opts: ReadOptions,
    regions = false,
  ): Promise<{ lines: LineReading[]; glyphs: (Glyph[][] | undefined)[]; metrics: ReadMetrics }> {
    if (this.closed) throw new EngineError('ENGINE_CLOSED', 'the engine has been closed');
    const decoding = this.resolve(opts.decoding, { regions });
    const { tokenizer } = this.bundle;
    const context = opts.context ?? new DraftingContext(tokenizer, decoding.reference);
    const { drafter, verifier } = createStrategies(decoding, this.bundle);
    const metrics = opts.metrics ?? new SpecMetrics();
    if (decoding.draftLength === 'auto' && decoding.drafter !== 'none') await this.scheduler.calibrate();
    // Narrow lines first: lines admitted together pad to the widest of them.
    const widest = items.map((crops) => Math.max(...crops.map((c) => c.width)));
    const order = items.map((_, i) => i).sort((a, b) => widest[a] - widest[b]);
    const lines: LineReading[] = new Array(items.length);
    // Asked for (align): each item's glyphs, one list per crop (a line's reading carries its own as `glyphs` too).
    const glyphs: (Glyph[][] | undefined)[] = new Array(items.length);
    const onTokens = opts.onTokens;
    const decoded = (ids: readonly number[]): string => tokenizer.decode(ids);
    const readOne = (
      crops: readonly GrayCrop[],
      maxChars: number | undefined,
      tokens: Tokens | undefined,
      evidence?: string,
    ): Promise<LineOutput> =>
      this.scheduler
        .read({
          crops,
          drafter,
          verifier,
          draftLength: decoding.draftLength,
          context,
          metrics,
          visualKeep: decoding.visualTokens.keep,
          align: opts.align,
          signal: opts.signal,
          ...(maxChars !== undefined ? { maxChars } : {}),
          ...(opts.unreadScripts && this.bundle.config.scriptGate ? { unreadGate: this.bundle.config.scriptGate } : {}),
          onTokens: tokens ? (ids, fromDraft, drafted) => tokens(decoded(ids), fromDraft, drafted) : undefined,
          ...(evidence !== undefined ? { evidence: tokenizer.encode(evidence) } : {}),
        })
        .then((out) => {
          if (!out.tooLong) metrics.vision(out.visionGroup, out.visionMs);
          return out;
        });
    const { maxWidth, height } = this.bundle.config.image;
    const { readChars, readWidth } = this;
    const reader: LineReader = {
      readOne,
      decoded,
      height,
      maxWidth,
      readChars,
      readWidth,
      piecesOf: (c) => this.piecesOf(c),
    };
    await Promise.all(
      order.map(async (i) => {
        const crops = items[i];
        const tokens: Tokens | undefined = onTokens
          ? (text, fromDraft, drafted) => onTokens(i, text, fromDraft, drafted)
          : undefined;
        let reading: LineReading;
        if (crops.length > 1) {
          // A region's crops go as they are (a region bundle learnt lines of at most 100 characters).
          const out = await readOne(crops, undefined, tokens);
          glyphs[i] = out.glyphs;
          reading = { text: decoded(out.ids), ids: out.ids, confidence: out.confidence, ctcText: decoded(out.ctc) };
        } else {
          checkCrop(crops[0], this.imageSpec);
          const r = await readLine(reader, crops[0], tokens, true, opts.evidence?.[i]);
          glyphs[i] = r.glyphs ? [r.glyphs] : undefined;
          // A line read whole keeps its own ids; pieces' joined text is encoded once.
          reading = { ...r, ids: r.ids ?? tokenizer.encode(r.text) };
        }
        // Look-alike letters settled after decoding, so that every drafter and verifier still gives one answer.
        const settled = reading.unread ? reading : oneScriptReading(reading);
        if (settled !== reading) {
          glyphs[i] = crops.length > 1 ? glyphs[i]?.map(oneScriptGlyphs) : settled.glyphs && [settled.glyphs];
          settled.ids = respeltIds(reading.ids, settled.text, tokenizer);
        }
        lines[i] = settled;
        opts.onLine?.(i, lines[i]);
      }),
    );
    return { lines, glyphs, metrics: { lines: items.length, ...metrics.snapshot() } };
  }

  /**
   * The CTC head's confidence in its own reading of each crop (vision pass only, no decoding): the mean
   * log-probability of the frames that emit a character, and how many did. Cheap enough to ask of a few lines
   * twice, upright and turned, to tell which way up a page is. `keep`: these crops will be read as lines (not
   * regions), so their visual states are kept for that reading instead of being computed again. `unread`: the
   * bundle's script gate's score (above 0: a script the model lacks; -Infinity without a gate or on a line too
   * short to judge), and `script` the script it takes a flagged line for.
   */
  async ctcConfidence(
    crops: readonly GrayCrop[],
    opts: { keep?: boolean } = {},
  ): Promise<({ logProb: number; frames: number } & ScriptVerdict)[]> {
    if (this.closed) throw new EngineError('ENGINE_CLOSED', 'the engine has been closed');
    if (!crops.length) return [];
    // A line wider than one vision pass as its pieces, cut as its reading will cut them: their states are the ones that
    // reading can use. (A narrower wide line's state serves its reading whole, or is dropped if it goes in pieces.)
    const pieces = crops.map((c) => {
      checkCrop(c, this.imageSpec);
      return c.width > this.bundle.config.image.maxWidth ? this.piecesOf(c) : [{ crop: c, x: 0, scale: 1 }];
    });
    const flat = pieces.flat().map((p) => p.crop);
    // Each run's state read as it is (joined into one, its rows would only be copied out again).
    const states = await runVisionChunks(this.bundle, { crops: flat });
    const gate = this.bundle.config.scriptGate;
    const each: { logProb: number; frames: number }[] = [];
    const verdicts: ScriptVerdict[] = [];
    let row = 0;
    for (const state of states) {
      const mine = flat.slice(row, (row += state.batch));
      if (opts.keep && !this.readsRegions) this.scheduler.remember(mine, state);
      each.push(...ctcConfidence(state, this.bundle.config.specialIds.ctcBlank));
      for (let r = 0; r < state.batch; r++) verdicts.push(gate ? scriptVerdict(gate, state, r) : UNJUDGED);
    }
    let at = 0;
    return pieces.map((p) => {
      const from = at;
      const mine = each.slice(at, (at += p.length));
      const frames = mine.reduce((n, m) => n + m.frames, 0);
      // A line in pieces: the mean of its pieces' scores that could be judged, the script of the surest.
      const judged = verdicts.slice(from, at).filter((v) => v.unread > -Infinity);
      const unread = judged.length ? judged.reduce((a, v) => a + v.unread, 0) / judged.length : -Infinity;
      const surest = judged.reduce<ScriptVerdict | null>((a, v) => (a && a.unread >= v.unread ? a : v), null);
      return {
        logProb: frames ? mine.reduce((s, m) => s + (m.frames ? m.logProb * m.frames : 0), 0) / frames : -Infinity,
        frames,
        unread,
        script: surest?.script ?? null,
      };
    });
  }

  /** Lines still being read fail with ENGINE_CLOSED; the sessions are released once nothing runs on them. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.scheduler.shutdown(
      new EngineError('ENGINE_CLOSED', 'the engine was closed while this line was being read'),
    );
    await closeBundle(this.bundle);
  }
}
