/**
 * A whole document: open it (image, multi-page TIFF or PDF), render the requested pages one at a time, analyse
 * each page's layout, crop its text lines, and hand every page's lines to the engine without waiting for the
 * previous page (up to PAGES_AHEAD pages ahead of the oldest still decoding), so lines of different pages share
 * decoder batches; then assemble blocks and markdown. A PDF's text layer becomes the reference drafter's text when
 * the request drafts from a reference and sent none, and is offered line by line as evidence, taken only where the
 * line's own frames fit it as well as the reading (text-layer.ts). Lines whose reading looks like mathematics are
 * read again by the formula reader (formula-reader.ts), and become formulas where it reads LaTeX that renders
 * (document/formula.ts); so do runs of symbols within a prose line, cut from its crop (document/inline-formulas.ts).
 */
import { assemblePage, type LineOut, type PageOut, UNREADABLE_MARK } from '../document/assemble.js';
import { cropLines, type LineCrop } from '../document/crop-lines.js';
import type { PageLayout } from '../document/layout/analyze.js';
import { preparePageOffThread, type PreparedPage } from '../document/layout/off-thread.js';
import { cropLineImage } from '../document/line-image.js';
import { PAGE_BREAK } from '../document/markdown.js';
import { inSourceFrame, type PageFrame } from '../document/page-geometry.js';
import type { Turn } from '../document/orientation.js';
import {
  DEFAULT_SOURCE_LIMITS,
  type DocumentSource,
  type LayerChar,
  openSource,
  type SourceLimits,
} from '../document/source.js';
import { DraftingContext } from '../engine/strategies/drafting-context.js';
import type { Engine, LineReading, ReadMetrics } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import { SpecMetrics } from '../engine/decode/metrics.js';
import type { DecodingOptions, UncheckedDecoding } from '../engine/strategies/options.js';
import type { FormulaReader } from './formula-reader.js';
import { lineOut } from './line-out.js';
import { readFormulas } from './page-formulas.js';
import { unreadScriptWarning } from './page-script.js';
import { howToRead } from './page-turn.js';
import { pageLanguage } from '../document/page-language.js';
import { pageWarnings } from './reading-trust.js';
import { withPixels } from './pixel-budget.js';
import { layerAgrees, layerText, withReference } from './text-layer.js';
import { type ReadingOptions, resolveReading } from '../options/reading-options.js';

export interface DocumentReading {
  format: string;
  pageCount: number;
  pages: PageOut[];
  markdown: string;
  /** Plain text: every line, blocks separated by blank lines. */
  text: string;
  /** Lines of all pages marked unreadable (LineOut.unreadable). */
  unreadableLines: number;
  metrics: ReadMetrics;
  /**
   * Milliseconds spent in each stage, summed over the pages (pages overlap, so they add up to more than the wall time).
   */
  stages: StageTimes;
}

export interface StageTimes {
  /** Decoding the image or rendering the PDF page. */
  render: number;
  /** Background flattening and deskew (the layout worker thread). */
  flatten: number;
  /** Layout analysis (the layout worker thread). */
  layout: number;
  /** Which way up: the CTC head's reading of a few lines, and the page prepared again when it was upside down. */
  orient: number;
  /** Cutting and scaling the line crops. */
  crop: number;
  /** The vision passes (the engine's worker thread), from the engine's metrics. */
  vision: number;
  /** The decoder's steps, from the engine's metrics. */
  decode: number;
  /** Blocks, markdown and JSON from the lines' text. */
  assemble: number;
}

/** What readDocument reads by: the reading options (options/reading-options.ts), with their defaults. */
type Reading = Omit<ReadingOptions, 'formats' | 'formulas'>;

/** The reading options a caller leaves out take their declared defaults; the rest is how to read and report. */
export interface ReadDocumentOptions extends Partial<Reading> {
  /** As sent, or as a job resolved them when it was submitted. */
  decoding?: UncheckedDecoding;
  limits?: SourceLimits;
  signal?: AbortSignal;
  /** The page count once the document is open, before any page is read. */
  onOpen?: (pages: number[]) => void;
  /** A page read, and the milliseconds since its rendering began (pages overlap: PAGES_AHEAD). */
  onPage?: (page: PageOut, ms: number) => void;
  /** Tokens as they are committed: page index, line number on the page (reading order), text, draft flags, and */
  /** how deep the draft offered at that step was (0: no draft). */
  onTokens?: (page: number, line: number, text: string, fromDraft: readonly boolean[], drafted: number) => void;
  /** Reads display formulas as LaTeX; absent or null: every line is read as text. */
  formulas?: FormulaReader | null;
}

/** A caller's options with every reading option settled. */
type Settled = ReadDocumentOptions & Reading;

function settle(opts: ReadDocumentOptions): Settled {
  const { pages, words, chars, dropHeadersFooters, scriptGate, textLayer } = opts;
  const {
    formats: _formats,
    formulas: _formulas,
    ...reading
  } = resolveReading({ pages, words, chars, dropHeadersFooters, scriptGate, textLayer });
  return { ...opts, ...reading };
}

/**
 * The page with its unreadable lines counted, its warnings (reading-trust.ts) where it has any, and its scripts and
 * language. `unreadScript`: the script the gate found the page in, where the model does not read it.
 */
function withWarnings(
  page: PageOut,
  lines: readonly LineOut[],
  lineHeight: number,
  unreadScript: string | null,
): PageOut {
  const unreadableLines = lines.filter((l) => l.unreadable).length;
  const warnings = [...pageWarnings(lines, lineHeight), ...unreadScriptWarning(unreadScript)];
  const { scripts, language } = pageLanguage(lines, unreadScript);
  return { ...page, unreadableLines, scripts, language, ...(warnings.length ? { warnings } : {}) };
}

/** Milliseconds of the stages before the engine's, summed over a document's pages. */
type PageStages = Pick<StageTimes, 'render' | 'flatten' | 'layout' | 'orient' | 'crop'>;

/** A page made ready once its pixels fit the process's budget (pixel-budget.ts), held until its lines are cut. */
async function preparePage(...args: Parameters<typeof prepareAdmitted>): ReturnType<typeof prepareAdmitted> {
  const [, source, index, opts] = args;
  const limits = opts.limits ?? DEFAULT_SOURCE_LIMITS;
  return withPixels(limits, source.pixels(index), opts.signal, () => prepareAdmitted(...args));
}

/**
 * A page made ready for the engine: rendered, prepared (off thread), its lines cut, and turned the right way up
 * where the model says it reads upside down. Only the page's size leaves: its rasters go when this returns.
 */
async function prepareAdmitted(
  engine: Engine,
  source: DocumentSource,
  index: number,
  opts: Settled,
  stages: PageStages,
): Promise<{
  size: { width: number; height: number };
  prepared: PreparedPage;
  crops: LineCrop[];
  unreadScript: string | null;
}> {
  const t0 = performance.now();
  const rendered = await source.render(index);
  stages.render += performance.now() - t0;
  // An image file of one page may be a line image; a PDF page is a page.
  const isImage = source.format !== 'pdf';
  let prepared = await preparePageOffThread({
    page: rendered,
    lineImage: isImage && source.pageCount === 1,
    capture: isImage,
  });
  stages.flatten += prepared.ms.flatten + prepared.ms.deskew;
  stages.layout += prepared.ms.layout;
  const cut = async (p: PreparedPage): Promise<LineCrop[]> => {
    const t1 = performance.now();
    // A line image is cut as the engine's line path cuts one (margins, polarity), not as a page's line.
    const out = p.oneLine
      ? [await cropLineImage(p.page, engine.imageSpec)]
      : await cropLines(
          p.page,
          p.layout.blocks.flatMap((b) => b.lines.map((l) => l.box)),
          engine.imageSpec,
        );
    stages.crop += performance.now() - t1;
    return out;
  };
  let crops = await cut(prepared);
  let unreadScript: string | null = null;
  // Which way up, asked of the model: a page (half round), or a line image on its side (one quarter or the other);
  // an upright line image is read as it is.
  if (!prepared.oneLine || prepared.turn !== 0) {
    const t = performance.now();
    const how = await howToRead(engine, prepared, crops);
    unreadScript = how.unreadScript;
    if (how.upsideDown) {
      prepared = await preparePageOffThread({
        page: rendered,
        turn: ((prepared.turn + 180) % 360) as Turn,
        lineImage: prepared.oneLine,
        capture: isImage,
      });
      crops = await cut(prepared);
    }
    stages.orient += performance.now() - t;
  }
  return { size: { width: rendered.width, height: rendered.height }, prepared, crops, unreadScript };
}

export function plainText(pages: readonly PageOut[]): string {
  return pages
    .map((p) =>
      p.blocks
        .filter((b) => b.lines.length)
        .map((b) => b.lines.map((l) => (l.unreadable ? UNREADABLE_MARK : l.text)).join('\n'))
        .join('\n\n'),
    )
    .join('\n\n');
}

/**
 * Pages rendered and handed to the engine ahead of the oldest one still decoding. A few keep the batches full
 * across page boundaries; without a bound, a 100-page PDF's crops would all wait in memory at once.
 */
export const PAGES_AHEAD = 3;

export async function readDocument(
  engine: Engine,
  bytes: Uint8Array,
  file: string,
  given: ReadDocumentOptions = {},
): Promise<DocumentReading> {
  const opts = settle(given);
  const source = await openSource(bytes, file, opts.pages, opts.limits ?? DEFAULT_SOURCE_LIMITS);
  try {
    return await readSource(engine, source, opts);
  } finally {
    source.close();
  }
}

/** What every page of one document is read with, besides the page itself. */
interface DocumentRun {
  engine: Engine;
  source: DocumentSource;
  opts: Settled;
  /** The decoding as asked, with the text layer as its reference (withReference): the formula reader's. */
  input: UncheckedDecoding | undefined;
  /** The decoding resolved once for the document. */
  decoding: DecodingOptions;
  context: DraftingContext;
  metrics: SpecMetrics;
  stages: PageStages & { assemble: number };
  /** Stops the decoding of every page: the caller's cancel, or one page failing. */
  signal: AbortSignal;
}

/** A page handed to the engine: what its assembly needs once its lines are read. */
interface StartedPage {
  index: number;
  layout: PageLayout;
  crops: LineCrop[];
  /** The PDF's text layer, where the page is read as drawn. */
  layer: LayerChar[] | null;
  /** Each line's text in the layer, offered to the engine as evidence. */
  evidence: (string | undefined)[] | undefined;
  frame: PageFrame;
  /** The script the page is in where the model does not read it (worker/page-script.ts). */
  unreadScript: string | null;
  /** performance.now() when its rendering began. */
  startedAt: number;
}

/**
 * One page's work up to handing its lines to the engine. A function of its own so that its rasters (two of 11 MB
 * for a docbank page) go when it returns, not when the loop's next turn overwrites them. The reading comes back in
 * a record: returned bare, the async function would wait for it.
 */
async function startPage(run: DocumentRun, index: number): Promise<{ reading: Promise<PageOut>; lines: number }> {
  const { engine, source, opts } = run;
  const startedAt = performance.now();
  const { size, prepared, crops, unreadScript } = await preparePage(engine, source, index, opts, run.stages);
  const { layout } = prepared;
  layout.rotation = prepared.turn;
  // A born-digital page read as drawn: its text layer's characters lie on the lines' bands (text-layer.ts).
  const asDrawn = source.format === 'pdf' && opts.textLayer && prepared.turn === 0 && prepared.degrees === 0;
  const layer = asDrawn ? source.textLayerChars(index) : null;
  const bands = layout.blocks.flatMap((b) => b.lines.map((l) => l.band));
  const evidence = layer && !prepared.oneLine ? bands.map((b) => layerText(layer, b)) : undefined;
  // Every box in the page as it came in, whichever way it was turned and straightened to be read. Taken here so
  // that the reading below holds none of the page's rasters while its lines decode.
  const frame: PageFrame = {
    ...size,
    turn: prepared.turn,
    degrees: prepared.degrees,
    ...(prepared.sheet ? { sheet: prepared.sheet } : {}),
  };
  const onTokens = opts.onTokens;
  // A region bundle reads a paragraph's lines as regions; everything else (tables, headings, furniture) line by
  // line.
  let at = 0;
  const groups = layout.blocks.flatMap((b) => {
    const mine = crops.slice(at, (at += b.lines.length));
    return b.type === 'paragraph' || b.type === 'list_item' ? [mine] : mine.map((c) => [c]);
  });
  const reading = engine
    .readBlocks(groups, {
      decoding: run.decoding,
      context: run.context,
      metrics: run.metrics,
      // Always: where the glyphs lie says which lines are code (monospace.ts), besides word boxes and inline
      // formulas.
      align: true,
      signal: run.signal,
      unreadScripts: unreadScript !== null && opts.scriptGate,
      ...(evidence ? { evidence } : {}),
      ...(onTokens
        ? {
            onTokens: (line: number, text: string, fromDraft: readonly boolean[], drafted: number) =>
              onTokens(index, line, text, fromDraft, drafted),
          }
        : {}),
    })
    .then((r) => finishPage(run, { index, layout, crops, layer, evidence, frame, unreadScript, startedAt }, r.lines));
  return { reading, lines: crops.length };
}

/** A page whose lines are read: its formulas read again, each line settled, and the page assembled. */
async function finishPage(run: DocumentRun, page: StartedPage, lines: readonly LineReading[]): Promise<PageOut> {
  const { opts } = run;
  const { index, layout, crops, layer, evidence } = page;
  const { formulas, inlineRead } = await readFormulas(opts.formulas, layout, lines, crops, run.input, run.signal);
  const t2 = performance.now();
  const layerHolds =
    evidence !== undefined && layerAgrees(lines.map((l, i) => ({ reading: l.text, layer: evidence[i] })));
  let k = 0;
  const texts: LineOut[][] = layout.blocks.map((b) =>
    b.lines.map((l) => {
      const i = k++;
      const offer = layer && layerHolds ? { chars: layer, text: evidence?.[i] } : null;
      return lineOut(l, lines[i], crops[i], formulas.get(i), inlineRead.get(i), offer, opts);
    }),
  );
  const done = inSourceFrame(
    withWarnings(assemblePage(index, layout, texts, opts), texts.flat(), layout.lineHeight, page.unreadScript),
    page.frame,
  );
  run.stages.assemble += performance.now() - t2;
  opts.onPage?.(done, performance.now() - page.startedAt);
  return done;
}

async function readSource(engine: Engine, source: DocumentSource, opts: Settled): Promise<DocumentReading> {
  const input = withReference(opts.decoding, source);
  // Once per document (options a job resolved already come back as they are); bad ones fail before rendering.
  const decoding = engine.resolve(input);
  opts.onOpen?.(source.pages);
  const context = new DraftingContext(engine.bundle.tokenizer, decoding.reference);
  const metrics = new SpecMetrics();
  let lineCount = 0;
  const stages = { render: 0, flatten: 0, layout: 0, orient: 0, crop: 0, assemble: 0 };
  // One failing page stops the decoding already started for the others.
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  const pending: Promise<PageOut>[] = [];
  const run: DocumentRun = { engine, source, opts, input, decoding, context, metrics, stages, signal: stop.signal };
  try {
    for (const index of source.pages) {
      if (pending.length >= PAGES_AHEAD) await pending[pending.length - PAGES_AHEAD].catch(() => undefined);
      if (stop.signal.aborted) break;
      const { reading, lines } = await startPage(run, index);
      lineCount += lines;
      reading.catch(() => stop.abort()); // handled by Promise.all below; abort the rest at once
      pending.push(reading);
    }
  } catch (e) {
    stop.abort();
    await Promise.allSettled(pending);
    opts.signal?.removeEventListener('abort', onAbort);
    throw e;
  }
  let pages: PageOut[];
  try {
    // The caller's cancel must still reach lines decoding after the last page was submitted.
    pages = await Promise.all(pending);
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  if (opts.signal?.aborted) throw new EngineError('CANCELLED', 'reading the document was cancelled');
  const snapshot = metrics.snapshot();
  return {
    format: source.format,
    pageCount: source.pageCount,
    pages,
    markdown: pages
      .map((p) => p.markdown)
      .filter(Boolean)
      .join(PAGE_BREAK),
    text: plainText(pages),
    unreadableLines: pages.reduce((n, p) => n + (p.unreadableLines ?? 0), 0),
    metrics: { lines: lineCount, ...snapshot },
    stages: { ...stages, vision: snapshot.visionMs, decode: snapshot.decodeMs },
  };
}
