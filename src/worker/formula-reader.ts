/**
 * The formula reader: the formula bundle (a line model fine-tuned to read formula crops as LaTeX, text lines as
 * text), opened the first time a page has a line that looks like mathematics, so that a server or a CLI run that
 * never meets one pays neither its load time nor its memory. One per process, shared by every job.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';
import { readBundleConfig } from '../engine/bundle/bundle.js';
import { type EngineOptions, Engine } from '../engine/engine.js';
import type { DecodingOptions, UncheckedDecoding } from '../engine/strategies/options.js';
import type { GrayCrop } from '../engine/vision/preprocess.js';
import type { LineReading } from '../engine/engine.js';

/** The formula bundle shipped in this repository. */
export const DEFAULT_FORMULA_BUNDLE = join(PACKAGE_ROOT, 'models', 'specula-formula-base');

export interface FormulaReading extends LineReading {
  /** The reading ran to the decoder's length cap (it may not have closed). */
  capped: boolean;
}

export class FormulaReader {
  private opening: Promise<Engine> | null = null;

  constructor(
    readonly dir: string = DEFAULT_FORMULA_BUNDLE,
    private readonly opts: EngineOptions = {},
  ) {}

  /** A reader for the shipped bundle, or null where this install has none (formulas are then read as text). */
  static shipped(opts: EngineOptions = {}): FormulaReader | null {
    return existsSync(join(DEFAULT_FORMULA_BUNDLE, 'config.json'))
      ? new FormulaReader(DEFAULT_FORMULA_BUNDLE, opts)
      : null;
  }

  engine(): Promise<Engine> {
    if (!this.opening) {
      this.opening = this.open();
      // A bundle that fails to open fails this read; the next one tries again.
      this.opening.catch(() => (this.opening = null));
    }
    return this.opening;
  }

  private async open(): Promise<Engine> {
    // The precision asked of the line bundle, where this bundle has that graph (it may have no int8 vision).
    const { precision, ...rest } = this.opts;
    const int8 = Boolean(readBundleConfig(this.dir).files.visionInt8);
    return Engine.open(this.dir, { ...rest, ...(precision && (precision !== 'int8' || int8) ? { precision } : {}) });
  }

  /**
   * Read formula crops: the decoder's own reading (greedy verification), drafted by the request's drafter where
   * the formula bundle has it (a drafter changes no text), else by its default one. Not the joint verifier: the
   * CTC head cannot spell LaTeX longer than its frames, so its scores would cut formulas short; nor relaxed: a
   * formula is exact or it is wrong.
   */
  async read(
    crops: readonly GrayCrop[],
    decoding: UncheckedDecoding | undefined,
    signal?: AbortSignal,
  ): Promise<FormulaReading[]> {
    const engine = await this.engine();
    let resolved: DecodingOptions;
    try {
      const drafter = (decoding as { drafter?: unknown } | undefined)?.drafter; // not yet checked: resolve checks it
      resolved = engine.resolve({ ...(typeof drafter === 'string' ? { drafter } : {}), verifier: 'greedy' });
    } catch {
      resolved = engine.resolve({ verifier: 'greedy' });
    }
    const cap = engine.bundle.config.decoding.maxNewTokens;
    const { lines } = await engine.readLines(crops, { decoding: resolved, ...(signal ? { signal } : {}) });
    return lines.map((l) => ({ ...l, capped: l.ids.length >= cap }));
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = null;
    if (opening) await (await opening.catch(() => null))?.close();
  }
}
