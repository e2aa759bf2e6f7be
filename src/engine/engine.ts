/**
 * The engine's front door: open a bundle, then read line crops with the decoding strategy each request
 * chooses. Lines of concurrent requests share the scheduler's batches; text comes back in the caller's order.
 */
import { type Bundle, type BundleOptions, closeBundle, DEFAULT_BUNDLE, loadBundle } from './bundle.js';
import { DocumentContext } from './document-context.js';
import { EngineError } from './errors.js';
import { SpecMetrics, type SpecMetricsSnapshot } from './metrics.js';
import { type DecodingOptions, type DecodingOptionsInput, resolveDecoding } from './options.js';
import type { GrayCrop, ImageSpec } from './preprocess.js';
import { createDrafter, createVerifier } from './registry.js';
import { type ForwardObservation, Scheduler } from './scheduler.js';

export interface LineReading {
  text: string;
  ids: number[];
  /** Mean probability of the committed tokens. */
  confidence: number;
  /** The CTC head's own reading: a draft, never the answer. */
  ctcText: string;
}

export interface ReadMetrics extends SpecMetricsSnapshot {
  lines: number;
}

export interface ReadOptions {
  decoding?: DecodingOptionsInput;
  /** Text this document already has (ngram) and its reference; one per document, never shared across tenants. */
  context?: DocumentContext;
  /** Share one metrics record across several calls (the pages of one document). */
  metrics?: SpecMetrics;
  onLine?: (index: number, reading: LineReading) => void;
  /** Committed tokens of line `index` as they are decided; fromDraft marks tokens of an accepted draft. */
  onTokens?: (index: number, text: string, fromDraft: readonly boolean[], drafted: number) => void;
  signal?: AbortSignal;
}

export interface EngineOptions extends BundleOptions {
  /** Most lines in one decoder forward (default 32). */
  maxBatch?: number;
}

export class Engine {
  private readonly scheduler: Scheduler;
  private closed = false;

  private constructor(readonly bundle: Bundle, maxBatch: number) {
    this.scheduler = new Scheduler(bundle, { maxBatch });
  }

  static async open(dir: string = DEFAULT_BUNDLE, opts: EngineOptions = {}): Promise<Engine> {
    return new Engine(await loadBundle(dir, opts), Math.max(1, opts.maxBatch ?? 32));
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
  get stats(): { queued: number; active: number; forwards: number } {
    return { ...this.scheduler.load, forwards: this.scheduler.forwards };
  }

  /** Watch every decoder forward (for metrics); returns the function that stops watching. */
  observeForwards(observer: (o: ForwardObservation) => void): () => void {
    this.scheduler.observers.add(observer);
    return () => this.scheduler.observers.delete(observer);
  }

  /** Validate decoding options against this bundle (throws INVALID_OPTIONS listing the choices). */
  resolve(decoding?: DecodingOptionsInput): DecodingOptions {
    return resolveDecoding(decoding, this.bundle.config);
  }

  async readLines(crops: readonly GrayCrop[], opts: ReadOptions = {}): Promise<{ lines: LineReading[]; metrics: ReadMetrics }> {
    if (this.closed) throw new EngineError('ENGINE_CLOSED', 'the engine has been closed');
    const decoding = this.resolve(opts.decoding);
    const { tokenizer } = this.bundle;
    const context = opts.context ?? new DocumentContext(tokenizer, decoding.reference);
    const drafter = createDrafter(decoding, this.bundle);
    const verifier = createVerifier(decoding, this.bundle);
    const metrics = opts.metrics ?? new SpecMetrics();
    if (decoding.draftLength === 'auto' && decoding.drafter !== 'none') await this.scheduler.calibrate();
    // Narrow lines first: lines admitted together pad to the widest of them.
    const order = crops.map((_, i) => i).sort((a, b) => crops[a].width - crops[b].width);
    const lines: LineReading[] = new Array(crops.length);
    await Promise.all(order.map(async (i) => {
      const out = await this.scheduler.read({
        crop: crops[i],
        drafter,
        verifier,
        draftLength: decoding.draftLength,
        context,
        metrics,
        visualKeep: decoding.visualTokens.keep,
        signal: opts.signal,
        onTokens: opts.onTokens ? (ids, fromDraft, drafted) => opts.onTokens?.(i, tokenizer.decode(ids), fromDraft, drafted) : undefined,
      });
      metrics.vision(out.visionGroup, out.visionMs);
      const reading = { text: tokenizer.decode(out.ids), ids: out.ids, confidence: out.confidence, ctcText: tokenizer.decode(out.ctc) };
      lines[i] = reading;
      opts.onLine?.(i, reading);
    }));
    return { lines, metrics: { lines: crops.length, ...metrics.snapshot() } };
  }

  /** Lines still being read fail with ENGINE_CLOSED; the sessions are released once nothing runs on them. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.scheduler.shutdown(new EngineError('ENGINE_CLOSED', 'the engine was closed while this line was being read'));
    await closeBundle(this.bundle);
  }
}
