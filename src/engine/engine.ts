/**
 * The engine's front door: open a bundle, then read line crops with the decoding strategy each request
 * chooses. Lines of concurrent requests share the scheduler's batches; text comes back in the caller's order.
 */
import { type Bundle, type BundleOptions, closeBundle, DEFAULT_BUNDLE, loadBundle } from './bundle.js';
import type { Glyph } from './ctc-align.js';
import { ctcConfidence } from './ctc-confidence.js';
import { DraftingContext } from './drafting-context.js';
import { EngineError } from './errors.js';
import { SpecMetrics, type SpecMetricsSnapshot } from './metrics.js';
import { type DecodingOptions, type DecodingOptionsInput, resolveDecoding } from './options.js';
import { type GrayCrop, type ImageSpec, packBatch } from './preprocess.js';
import { createStrategies } from './registry.js';
import { type ForwardObservation, Scheduler, type SchedulerOptions } from './scheduler.js';
import { runVision } from './vision.js';

export interface LineReading {
  text: string;
  ids: number[];
  /** Mean probability of the committed tokens. */
  confidence: number;
  /** The CTC head's own reading: a draft, never the answer. */
  ctcText: string;
  /** Asked for (ReadOptions.align): each character of `text` with its crop columns and probability. */
  glyphs?: Glyph[];
}

/** A multi-line region read as one sequence: its text (lines joined by '\n') and its lines. */
export interface RegionReading extends LineReading {
  lines: string[];
  /** Asked for (ReadOptions.align): each line's glyphs, in its own crop's columns. */
  lineGlyphs?: Glyph[][];
}

export interface ReadMetrics extends SpecMetricsSnapshot {
  lines: number;
}

export interface ReadOptions {
  /** As a request sent them, or resolved once (Engine.resolve) for many reads. */
  decoding?: DecodingOptionsInput | DecodingOptions;
  /** Text this document already has (ngram) and its reference; one per document, never shared across tenants. */
  context?: DraftingContext;
  /** Share one metrics record across several calls (the pages of one document). */
  metrics?: SpecMetrics;
  onLine?: (index: number, reading: LineReading) => void;
  /** Force-align each line's final text to its CTC frames (glyphs: where each character is, for word boxes). */
  align?: boolean;
  /** Committed tokens of line `index` as they are decided; fromDraft marks tokens of an accepted draft. */
  onTokens?: (index: number, text: string, fromDraft: readonly boolean[], drafted: number) => void;
  signal?: AbortSignal;
}

export interface EngineOptions extends BundleOptions {
  /** Most lines in one decoder forward (default 32). */
  maxBatch?: number;
  /** Idle this long, the engine lets its recycled batch buffers go (default 2 s). */
  idleReleaseMs?: number;
  /** Called after that release (a server passes V8's gc(): the memory is returned then, not at some later GC). */
  collect?: () => void;
}

export class Engine {
  private readonly scheduler: Scheduler;
  private closed = false;

  private constructor(readonly bundle: Bundle, opts: SchedulerOptions) {
    this.scheduler = new Scheduler(bundle, opts);
  }

  static async open(dir: string = DEFAULT_BUNDLE, opts: EngineOptions = {}): Promise<Engine> {
    const { idleReleaseMs, collect } = opts;
    return new Engine(await loadBundle(dir, opts), { maxBatch: Math.max(1, opts.maxBatch ?? 32), idleReleaseMs, collect });
  }

  /** What a line crop must look like: the document layer scales crops to this. */
  get imageSpec(): ImageSpec {
    const { height, widthMultiple, maxWidth } = this.bundle.config.image;
    return { height, widthMultiple, maxWidth };
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
  resolve(decoding?: DecodingOptionsInput | DecodingOptions, opts: { regions?: boolean } = {}): DecodingOptions {
    return resolveDecoding(decoding, this.bundle.config, { regions: opts.regions ?? this.readsRegions });
  }

  async readLines(crops: readonly GrayCrop[], opts: ReadOptions = {}): Promise<{ lines: LineReading[]; metrics: ReadMetrics }> {
    const { lines, metrics } = await this.read(crops.map((c) => [c]), opts);
    return { lines, metrics };
  }

  /**
   * Read multi-line regions (region bundles): each region's line crops, top to bottom, are read as one sequence,
   * the decoder attending to every line's visual tokens at once. Verifiers: greedy (the default here) or tree.
   */
  async readRegions(regions: readonly (readonly GrayCrop[])[], opts: ReadOptions = {}): Promise<{ regions: RegionReading[]; metrics: ReadMetrics }> {
    const { lines, glyphs, metrics } = await this.read(regions, { ...opts, decoding: this.regionDecoding(opts.decoding) }, true);
    return {
      regions: lines.map((l, i) => ({ ...l, lines: l.text.split('\n'), ...(glyphs[i] ? { lineGlyphs: glyphs[i] } : {}) })),
      metrics,
    };
  }

  /** Whether this bundle reads multi-line regions (readRegions, and readBlocks by regions). */
  get readsRegions(): boolean {
    return Boolean(this.bundle.config.region);
  }

  /** A region read's decoding: greedy unless told, and never a verifier that scores one line's CTC frames. */
  private regionDecoding(decoding: DecodingOptionsInput | DecodingOptions | undefined): DecodingOptions {
    if (!this.bundle.config.region) {
      throw new EngineError('REGIONS_UNSUPPORTED', `bundle ${this.bundle.config.name} reads single lines; multi-line regions need a region bundle`);
    }
    return this.resolve(decoding, { regions: true });
  }

  /**
   * A page's lines, grouped by block, top to bottom. A line bundle reads every line on its own. A region bundle
   * reads each block's lines in runs of up to its maxLines as regions; a run whose reading has another number of
   * lines than it has crops (two lines merged, one split) is read again one line at a time, so every crop gets
   * its own text. Readings come back flat, in the blocks' order, one per crop.
   */
  async readBlocks(blocks: readonly (readonly GrayCrop[])[], opts: ReadOptions = {}): Promise<{ lines: LineReading[]; metrics: ReadMetrics }> {
    const region = this.bundle.config.region;
    if (!region) return this.readLines(blocks.flat(), opts);
    const runs: { first: number; crops: readonly GrayCrop[] }[] = [];
    let first = 0;
    for (const b of blocks) {
      for (let i = 0; i < b.length; i += region.maxLines) runs.push({ first: first + i, crops: b.slice(i, i + region.maxLines) });
      first += b.length;
    }
    const metrics = opts.metrics ?? new SpecMetrics();
    const decoding = this.regionDecoding(opts.decoding);
    const onTokens = opts.onTokens;
    // A region's tokens go to its lines in turn: a line break moves on to the next line.
    const seen = runs.map(() => 0);
    const read = await this.read(runs.map((r) => r.crops), {
      ...opts,
      metrics,
      decoding,
      onLine: undefined,
      onTokens: onTokens ? (k, text, fromDraft, drafted) => {
        let at = 0;
        for (const part of text.split('\n')) {
          if (part) onTokens(runs[k].first + Math.min(seen[k], runs[k].crops.length - 1), part, fromDraft.slice(at, at + part.length), drafted);
          at += part.length + 1;
          seen[k]++;
        }
        seen[k]--;
      } : undefined,
    }, true);
    const lines: LineReading[] = new Array(first);
    const redo: number[] = [];
    read.lines.forEach((r, k) => {
      const texts = r.text.split('\n');
      if (texts.length !== runs[k].crops.length) {
        redo.push(k);
        return;
      }
      texts.forEach((text, j) => {
        const glyphs = read.glyphs[k]?.[j];
        lines[runs[k].first + j] = { text, ids: this.bundle.tokenizer.encode(text), confidence: r.confidence, ctcText: r.ctcText.split('\n')[j] ?? '', ...(glyphs ? { glyphs } : {}) };
      });
    });
    if (redo.length) {
      // With the regions' own verifier: a page's lines are read one way whether or not their run was re-read.
      const again = await this.read(redo.flatMap((k) => runs[k].crops.map((c) => [c])), { ...opts, decoding, metrics, onTokens: undefined, onLine: undefined }, true);
      let at = 0;
      for (const k of redo) runs[k].crops.forEach((_, j) => (lines[runs[k].first + j] = again.lines[at++]));
    }
    lines.forEach((l, i) => opts.onLine?.(i, l));
    return { lines, metrics: { lines: first, ...metrics.snapshot() } };
  }

  /** `regions`: the items are read with region decoding (a region bundle's lines, as well as its regions). */
  private async read(items: readonly (readonly GrayCrop[])[], opts: ReadOptions, regions = false): Promise<{ lines: LineReading[]; glyphs: (Glyph[][] | undefined)[]; metrics: ReadMetrics }> {
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
    await Promise.all(order.map(async (i) => {
      const out = await this.scheduler.read({
        crops: items[i],
        drafter,
        verifier,
        draftLength: decoding.draftLength,
        context,
        metrics,
        visualKeep: decoding.visualTokens.keep,
        align: opts.align,
        signal: opts.signal,
        onTokens: opts.onTokens ? (ids, fromDraft, drafted) => opts.onTokens?.(i, tokenizer.decode(ids), fromDraft, drafted) : undefined,
      });
      metrics.vision(out.visionGroup, out.visionMs);
      glyphs[i] = out.glyphs;
      const own = out.glyphs && items[i].length === 1 ? { glyphs: out.glyphs[0] } : {};
      const reading = { text: tokenizer.decode(out.ids), ids: out.ids, confidence: out.confidence, ctcText: tokenizer.decode(out.ctc), ...own };
      lines[i] = reading;
      opts.onLine?.(i, reading);
    }));
    return { lines, glyphs, metrics: { lines: items.length, ...metrics.snapshot() } };
  }

  /**
   * The CTC head's confidence in its own reading of each crop (vision pass only, no decoding): the mean
   * log-probability of the frames that emit a character, and how many did. Cheap enough to ask of a few lines
   * twice, upright and turned, to tell which way up a page is. `keep`: these crops will be read as lines (not
   * regions), so their visual states are kept for that reading instead of being computed again.
   */
  async ctcConfidence(crops: readonly GrayCrop[], opts: { keep?: boolean } = {}): Promise<{ logProb: number; frames: number }[]> {
    if (this.closed) throw new EngineError('ENGINE_CLOSED', 'the engine has been closed');
    if (!crops.length) return [];
    const state = await runVision(this.bundle, packBatch(crops, this.imageSpec));
    if (opts.keep && !this.readsRegions) this.scheduler.remember(crops, state);
    return ctcConfidence(state, this.bundle.config.specialIds.ctcBlank);
  }

  /** Lines still being read fail with ENGINE_CLOSED; the sessions are released once nothing runs on them. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.scheduler.shutdown(new EngineError('ENGINE_CLOSED', 'the engine was closed while this line was being read'));
    await closeBundle(this.bundle);
  }
}
