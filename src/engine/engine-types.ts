/** What the engine's front door takes and gives: the options it opens and reads with, and the readings it returns. */
import type { BundleOptions } from './bundle/bundle.js';
import type { Glyph } from './ctc/align.js';
import type { EvidenceFit } from './ctc/score.js';
import type { SpecMetrics, SpecMetricsSnapshot } from './decode/metrics.js';
import type { DraftingContext } from './strategies/drafting-context.js';
import type { UncheckedDecoding } from './strategies/options.js';

export interface LineReading {
  text: string;
  ids: number[];
  /** Mean probability of the committed tokens. */
  confidence: number;
  /** The CTC head's own reading: a draft, never the answer. */
  ctcText: string;
  /** Asked for (ReadOptions.align): each character of `text` with its crop columns and probability. */
  glyphs?: Glyph[];
  /** In a script the model lacks (ReadOptions.unreadScripts): `text` is the CTC head's reading, nothing was decoded. */
  unread?: boolean;
  /** Where ReadOptions.evidence offered a text for the line and it was read whole: how well each fits its frames. */
  fit?: EvidenceFit;
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
  decoding?: UncheckedDecoding;
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
  /**
   * Lines the bundle's script gate flags (engine/ctc/script-gate.ts) are read by the CTC head alone and marked `unread`
   * (a caller sets it for a page it has found to be in such a script). No effect on a bundle without a gate.
   */
  unreadScripts?: boolean;
  /**
   * Per item (line bundles): a text the line may hold, such as a PDF's text layer. Each line read whole comes back
   * with `fit`, the CTC head's log-likelihood of it and of the reading, taken from the frames the reading used.
   */
  evidence?: readonly (string | undefined)[];
}

export interface EngineOptions extends BundleOptions {
  /** Most lines in one decoder forward (default `defaultMaxBatch(device)`). */
  maxBatch?: number;
  /** Idle this long, the engine lets its recycled batch buffers go (default 2 s). */
  idleReleaseMs?: number;
  /** Called after that release (a server passes V8's gc(): the memory is returned then, not at some later GC). */
  collect?: () => void;
  /**
   * Lines the CTC head counts more characters on are read in pieces (vision/wide-crops.ts); default the bundle's
   * image.readChars. null: every line up to one vision pass wide is read whole, as the model reads it run directly.
   */
  readChars?: number | null;
  /**
   * On a GPU, read the bundle's golden lines once before the engine is handed out (default true there): the
   * provider compiles its shaders on a graph's first runs, and a first request should not pay for that.
   */
  warmUp?: boolean;
}
