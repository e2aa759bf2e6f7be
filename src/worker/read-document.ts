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
import type { PageLayout, LayoutLine } from '../document/layout/analyze.js';
import type { Box } from '../document/layout/ink.js';
import { FALLBACK_CONFIDENCE, formulaVerdict, type FormulaVerdict, looksLikeFormula } from '../document/formula.js';
import { inlineCandidates, type InlineFormula, withInlineFormulas } from '../document/inline-formulas.js';
import { preparePageOffThread, type PreparedPage } from '../document/layout/off-thread.js';
import { cropLineImage } from '../document/line-image.js';
import { PAGE_BREAK } from '../document/markdown.js';
import { inSourceFrame, type PageFrame } from '../document/page-geometry.js';
import { isMonospace, pitchOf } from '../document/monospace.js';
import { lineWords } from '../document/word-boxes.js';
import type { Turn } from '../document/orientation.js';
import {
  DEFAULT_SOURCE_LIMITS,
  type DocumentSource,
  type LayerChar,
  openSource,
  type SourceLimits,
} from '../document/source.js';
import type { Glyph } from '../engine/ctc/align.js';
import { DraftingContext } from '../engine/strategies/drafting-context.js';
import type { Engine, LineReading, ReadMetrics } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import { SpecMetrics } from '../engine/decode/metrics.js';
import { type DecodingOptions, type UncheckedDecoding, MAX_REFERENCE_CHARS } from '../engine/strategies/options.js';
import { drafterSpec } from '../engine/strategies/registry.js';
import type { FormulaReader, FormulaReading } from './formula-reader.js';
import { howToRead } from './page-turn.js';
import { distrust, pageWarnings } from './reading-trust.js';
import { layerAgrees, layerText, layerWins, layerWords } from './text-layer.js';
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
  onPage?: (page: PageOut) => void;
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

/** The page with its unreadable lines counted and its warnings (reading-trust.ts), where it has any. */
function withWarnings(page: PageOut, lines: readonly LineOut[], lineHeight: number): PageOut {
  const unreadableLines = lines.filter((l) => l.unreadable).length;
  const warnings = pageWarnings(lines, lineHeight);
  return { ...page, unreadableLines, ...(warnings.length ? { warnings } : {}) };
}

/** A monospace line's pitch in page pixels (monospace.ts), from where its glyphs lie in its crop. */
function monospace(glyphs: readonly Glyph[] | undefined, crop: LineCrop, box: Box): { pitch?: number } {
  return glyphs && isMonospace(glyphs) ? { pitch: (pitchOf(glyphs) * (crop.place ?? box).width) / crop.width } : {};
}

type Decoding = ReadDocumentOptions['decoding'];

/** The decoding asked for, with the PDF's text layer as its reference where its drafter wants one and none was sent. */
function withReference(input: Decoding, source: DocumentSource): Decoding {
  // not yet checked: the engine checks it
  const asked = input as { drafter?: unknown; reference?: unknown } | undefined;
  if (typeof asked?.drafter !== 'string' || !drafterSpec(asked.drafter)?.needsReference || asked.reference)
    return input;
  // Cut to what a request may send: a huge text layer only drafts, it must not fail the job's options.
  const layer = source.pages
    .map((i) => source.textLayer(i) ?? '')
    .join('\n')
    .trim()
    .slice(0, MAX_REFERENCE_CHARS);
  return layer ? { ...input, reference: layer } : input;
}

/** Milliseconds of the stages before the engine's, summed over a document's pages. */
type PageStages = Pick<StageTimes, 'render' | 'flatten' | 'layout' | 'orient' | 'crop'>;

/**
 * A page made ready for the engine: rendered, prepared (off thread), its lines cut, and turned the right way up
 * where the model says it reads upside down. Only the page's size leaves: its rasters go when this returns.
 */
async function preparePage(
  engine: Engine,
  source: DocumentSource,
  index: number,
  opts: Settled,
  stages: PageStages,
): Promise<{
  size: { width: number; height: number };
  prepared: PreparedPage;
  crops: LineCrop[];
  unreadScript: boolean;
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
  let unreadScript = false;
  // Which way up, asked of the model: a page (half round), or a line image on its side (one quarter or the other);
  // an upright line image is read as it is.
  if (!prepared.oneLine || prepared.turn !== 0) {
    const t = performance.now();
    const how = await howToRead(engine, prepared, crops);
    unreadScript = how.unreadScript && opts.scriptGate;
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

/** A line's formula reading and what it was judged to be (document/formula.ts). */
interface FormulaRead {
  reading: FormulaReading;
  verdict: FormulaVerdict;
}

/**
 * Lines of a page that read like mathematics, read again by the formula reader (one batch per page): display
 * formulas whole, and runs of words within prose lines that read as mathematics, cut from their line's crop where
 * the alignment of its text puts them (document/inline-formulas.ts).
 */
async function readFormulas(
  reader: FormulaReader | null | undefined,
  layout: PageLayout,
  lines: readonly LineReading[],
  crops: readonly LineCrop[],
  decoding: Decoding,
  signal: AbortSignal,
): Promise<{ formulas: Map<number, FormulaRead>; inlineRead: Map<number, InlineFormula[]> }> {
  const formulas = new Map<number, FormulaRead>();
  const inlineRead = new Map<number, InlineFormula[]>();
  if (!reader) return { formulas, inlineRead };
  // Set apart as a display formula is: its block's only line, or a line taller than type (limits, fractions).
  const alone = layout.blocks.flatMap((b) =>
    b.lines.map(
      (l) =>
        (b.lines.length === 1 && (b.type === 'paragraph' || b.type === 'heading')) ||
        l.band.height >= 1.4 * layout.lineHeight,
    ),
  );
  const candidates = lines.flatMap((l, i) => (!l.unread && looksLikeFormula(l.text, alone[i]) ? [i] : []));
  const inline = inlineCandidates(lines, crops, new Set(candidates));
  if (!candidates.length && !inline.length) return { formulas, inlineRead };
  const read = await reader.read([...candidates.map((i) => crops[i]), ...inline.map((c) => c.crop)], decoding, signal);
  for (const [j, i] of candidates.entries())
    formulas.set(i, {
      reading: read[j],
      verdict: await formulaVerdict(read[j].text, read[j].capped, read[j].confidence, lines[i].confidence),
    });
  for (const [j, c] of inline.entries()) {
    const f = read[candidates.length + j];
    // Only LaTeX that renders, read with more confidence than the text reader read those words: anything else keeps
    // the words as read (a run of symbols the formula reader cannot close is text, not a flag on the whole line).
    if ((await formulaVerdict(f.text, f.capped, f.confidence, c.textConfidence)) !== 'latex') continue;
    const list = inlineRead.get(c.line) ?? [];
    list.push({ ...c, latex: f.text, confidence: f.confidence });
    inlineRead.set(c.line, list);
  }
  return { formulas, inlineRead };
}

/**
 * One line as the page gives it: a formula's LaTeX; the PDF's text layer where it is offered and stands for the
 * reading (text-layer.ts); else the reading, marked where it is not to be trusted (reading-trust.ts).
 */
function lineOut(
  l: LayoutLine,
  line: LineReading,
  crop: LineCrop,
  formula: FormulaRead | undefined,
  inline: InlineFormula[] | undefined,
  layer: { chars: LayerChar[]; text: string | undefined } | null,
  opts: Settled,
): LineOut {
  const wantWords = opts.words;
  if (formula?.verdict === 'latex') {
    // Word boxes of a formula: the formula is one "word" over its ink (hOCR, ALTO and a searchable PDF hold it
    // whole; its characters have no columns of their own in LaTeX).
    const f = formula.reading;
    const whole = { text: f.text, box: l.band, confidence: f.confidence };
    const words = wantWords ? { words: [opts.chars ? { ...whole, chars: [] } : whole] } : {};
    return { box: l.box, text: f.text, confidence: f.confidence, formula: 'latex', ...words };
  }
  const verdict = formula?.verdict ?? 'text';
  if (layer && !inline && verdict === 'text' && !line.unread && layerWins(line.text, layer.text, line.fit)) {
    const words = wantWords ? { words: layerWords(layer.chars, l.band, line.confidence, opts.chars) } : {};
    return {
      box: l.box,
      text: layer.text,
      confidence: line.confidence,
      textLayer: true,
      ...words,
      ...monospace(line.glyphs, crop, l.box),
    };
  }
  // (Glyphs are aligned for every line; words only where asked for.)
  const words =
    line.glyphs && wantWords ? { words: lineWords(crop, crop.place ?? l.box, line.glyphs, { chars: opts.chars }) } : {};
  const fallback = verdict === 'fallback' ? { formula: 'fallback' as const } : {};
  const confidence = verdict === 'fallback' ? Math.min(line.confidence, FALLBACK_CONFIDENCE) : line.confidence;
  const why = line.unread ? null : distrust(line);
  const untrusted = why ? { unreadable: true, distrust: why } : {};
  const out: LineOut = {
    box: l.box,
    text: line.text,
    confidence,
    ...(line.unread ? { unread: true } : {}),
    ...untrusted,
    ...words,
    ...fallback,
    ...monospace(line.glyphs, crop, l.box),
  };
  return inline ? withInlineFormulas(out, inline) : out;
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
  try {
    // One page's work up to handing its lines to the engine. A function of its own so that its rasters (two of 11 MB
    // for a docbank page) go when it returns, not when the loop's next turn overwrites them. The reading comes back in
    // a record: returned bare, the async function would wait for it.
    const startPage = async (index: number): Promise<{ reading: Promise<PageOut> }> => {
      const { size, prepared, crops, unreadScript } = await preparePage(engine, source, index, opts, stages);
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
      lineCount += crops.length;
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
          decoding,
          context,
          metrics,
          // Always: where the glyphs lie says which lines are code (monospace.ts), besides word boxes and inline
          // formulas.
          align: true,
          signal: stop.signal,
          unreadScripts: unreadScript,
          ...(evidence ? { evidence } : {}),
          ...(onTokens
            ? {
                onTokens: (line: number, text: string, fromDraft: readonly boolean[], drafted: number) =>
                  onTokens(index, line, text, fromDraft, drafted),
              }
            : {}),
        })
        .then(async (r) => {
          const { formulas, inlineRead } = await readFormulas(
            opts.formulas,
            layout,
            r.lines,
            crops,
            input,
            stop.signal,
          );
          const t2 = performance.now();
          const layerHolds =
            evidence !== undefined && layerAgrees(r.lines.map((l, i) => ({ reading: l.text, layer: evidence[i] })));
          let k = 0;
          const texts: LineOut[][] = layout.blocks.map((b) =>
            b.lines.map((l) => {
              const i = k++;
              const offer = layer && layerHolds ? { chars: layer, text: evidence?.[i] } : null;
              return lineOut(l, r.lines[i], crops[i], formulas.get(i), inlineRead.get(i), offer, opts);
            }),
          );
          const done = inSourceFrame(
            withWarnings(assemblePage(index, layout, texts, opts), texts.flat(), layout.lineHeight),
            frame,
          );
          stages.assemble += performance.now() - t2;
          opts.onPage?.(done);
          return done;
        });
      return { reading };
    };
    for (const index of source.pages) {
      if (pending.length >= PAGES_AHEAD) await pending[pending.length - PAGES_AHEAD].catch(() => undefined);
      if (stop.signal.aborted) break;
      const { reading } = await startPage(index);
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
