/**
 * A whole document: open it (image, multi-page TIFF or PDF), render the requested pages one at a time, find
 * and crop their lines, and hand every page's lines to the engine without waiting for the previous page, so
 * lines of different pages share decoder batches. A PDF's text layer becomes the reference drafter's text when
 * the request drafts from a reference and sent none; it is never used as the answer.
 */
import { cropLines } from '../document/crop-lines.js';
import { findLines } from '../document/lines.js';
import { DEFAULT_SOURCE_LIMITS, openSource, type SourceLimits } from '../document/source.js';
import { DocumentContext } from '../engine/document-context.js';
import type { Engine, ReadMetrics } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import { SpecMetrics } from '../engine/metrics.js';
import type { DecodingOptionsInput } from '../engine/options.js';
import type { Box } from '../document/lines.js';

export interface PageLine {
  box: Box;
  text: string;
}

export interface DocumentPage {
  index: number;
  width: number;
  height: number;
  lines: PageLine[];
  text: string;
}

export interface DocumentReading {
  format: string;
  pageCount: number;
  pages: DocumentPage[];
  text: string;
  metrics: ReadMetrics;
}

export interface ReadDocumentOptions {
  pages?: string;
  decoding?: DecodingOptionsInput;
  limits?: SourceLimits;
  signal?: AbortSignal;
  onPage?: (page: DocumentPage) => void;
}

export async function readDocument(engine: Engine, bytes: Uint8Array, file: string, opts: ReadDocumentOptions = {}): Promise<DocumentReading> {
  const source = await openSource(bytes, file, opts.pages, opts.limits ?? DEFAULT_SOURCE_LIMITS);
  let decoding = opts.decoding;
  if (decoding?.drafter === 'reference' && !decoding.reference) {
    const layer = source.pages.map((i) => source.textLayer(i) ?? '').join('\n').trim();
    if (layer) decoding = { ...decoding, reference: layer };
  }
  engine.resolve(decoding); // refuse bad options before rendering anything
  const context = new DocumentContext(engine.bundle.tokenizer, decoding?.reference);
  const metrics = new SpecMetrics();
  let visionMs = 0;
  let lineCount = 0;
  // One failing page stops the decoding already started for the others.
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  const pending: Promise<DocumentPage>[] = [];
  try {
    for (const index of source.pages) {
      if (stop.signal.aborted) break;
      const page = await source.render(index);
      const boxes = findLines(page);
      const crops = await cropLines(page, boxes, engine.imageSpec);
      lineCount += crops.length;
      const reading = engine.readLines(crops, { decoding, context, metrics, signal: stop.signal }).then((r) => {
        visionMs += r.metrics.visionMs;
        const lines = boxes.map((box, i) => ({ box, text: r.lines[i].text }));
        const done = { index, width: page.width, height: page.height, lines, text: lines.map((l) => l.text).join('\n') };
        opts.onPage?.(done);
        return done;
      });
      reading.catch(() => stop.abort()); // handled by Promise.all below; abort the rest at once
      pending.push(reading);
    }
  } catch (e) {
    stop.abort();
    await Promise.allSettled(pending);
    throw e;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  const pages = await Promise.all(pending);
  if (opts.signal?.aborted) throw new EngineError('CANCELLED', 'reading the document was cancelled');
  return {
    format: source.format,
    pageCount: source.pageCount,
    pages,
    text: pages.map((p) => p.text).join('\n\n'),
    metrics: { lines: lineCount, visionMs, ...metrics.snapshot() },
  };
}
