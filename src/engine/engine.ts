/**
 * The engine's front door: open a bundle, read many line crops in width-sorted batches (one vision pass
 * per batch, then batched decoding), return text in the caller's order with per-call metrics.
 */
import { type Bundle, type BundleOptions, closeBundle, DEFAULT_BUNDLE, loadBundle } from './bundle.js';
import { decodeGreedy } from './greedy.js';
import { type GrayCrop, type ImageSpec, packBatch } from './preprocess.js';
import { ctcGreedy, runVision } from './vision.js';

export interface LineReading {
  text: string;
  ids: number[];
  /** The CTC head's own reading: a draft, never the answer. */
  ctcText: string;
}

export interface ReadMetrics {
  lines: number;
  tokens: number;
  forwards: number;
  visionMs: number;
  decodeMs: number;
}

export interface ReadOptions {
  /** Lines per engine batch (default 32). */
  batchSize?: number;
  onLine?: (index: number, reading: LineReading) => void;
}

export class Engine {
  private constructor(readonly bundle: Bundle) {}

  static async open(dir: string = DEFAULT_BUNDLE, opts: BundleOptions = {}): Promise<Engine> {
    return new Engine(await loadBundle(dir, opts));
  }

  /** What a line crop must look like: the document layer scales crops to this. */
  get imageSpec(): ImageSpec {
    const { height, widthMultiple, maxWidth } = this.bundle.config.image;
    return { height, widthMultiple, maxWidth };
  }

  async readLines(crops: readonly GrayCrop[], opts: ReadOptions = {}): Promise<{ lines: LineReading[]; metrics: ReadMetrics }> {
    const batchSize = Math.max(1, opts.batchSize ?? 32);
    const { tokenizer } = this.bundle;
    const order = crops.map((_, i) => i).sort((a, b) => crops[a].width - crops[b].width);
    const lines: LineReading[] = new Array(crops.length);
    const metrics: ReadMetrics = { lines: crops.length, tokens: 0, forwards: 0, visionMs: 0, decodeMs: 0 };
    for (let s = 0; s < order.length; s += batchSize) {
      const idx = order.slice(s, s + batchSize);
      const t0 = performance.now();
      const vis = await runVision(this.bundle, packBatch(idx.map((i) => crops[i]), this.imageSpec));
      metrics.visionMs += performance.now() - t0;
      const ctc = ctcGreedy(vis, this.bundle.config.specialIds.ctcBlank);
      const res = await decodeGreedy(this.bundle, vis);
      metrics.forwards += res.forwards;
      metrics.decodeMs += res.decodeMs;
      idx.forEach((orig, r) => {
        const reading = { text: tokenizer.decode(res.ids[r]), ids: res.ids[r], ctcText: tokenizer.decode(ctc[r]) };
        metrics.tokens += res.ids[r].length + 1;
        lines[orig] = reading;
        opts.onLine?.(orig, reading);
      });
    }
    return { lines, metrics };
  }

  async close(): Promise<void> {
    await closeBundle(this.bundle);
  }
}
