/**
 * A document as pages: one image, every page of a multi-page TIFF, or a PDF (mupdf, compiled to WebAssembly:
 * no system install). Pages are rendered one at a time, only those asked for; a PDF's text layer is kept
 * apart (a drafting reference, never the answer). The format comes from the bytes, never the file name.
 */
import type * as mupdf from 'mupdf';
import { loadSharp } from './sharp.js';
import { decodeImage, DEFAULT_LIMITS, type GrayPage, type ImageLimits } from './decode-image.js';
import { drainMupdfLog as drainLog, loadMupdf, type MupdfModule } from './mupdf.js';
import { DocumentError } from './errors.js';
import { parsePageRange } from './page-range.js';
import { type SniffedFormat, sniffOrRefuse } from './sniff.js';

export interface SourceLimits extends ImageLimits {
  /** A document with more pages than this is refused unless a page range picks some. */
  maxPages: number;
  /** PDF rendering resolution. */
  pdfDpi: number;
  /**
   * Pixels of pages rendered and laid out at once across the process (worker/pixel-budget.ts); absent: maxPixels,
   * one page of the largest size allowed at a time.
   */
  pixelsInFlight?: number;
}

/** One character of a PDF's text layer and where it is drawn, in the page's pixels as rendered. */
export interface LayerChar {
  c: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export const DEFAULT_SOURCE_LIMITS: SourceLimits = { ...DEFAULT_LIMITS, maxPages: 500, pdfDpi: 200 };

export interface DocumentSource {
  format: SniffedFormat;
  pageCount: number;
  /** The pages to read: all, or the requested range. */
  pages: number[];
  render(index: number): Promise<GrayPage>;
  /** The pixels the page renders to, known before it is rendered (an image's header, a PDF page's bounds). */
  pixels(index: number): Promise<number>;
  /** The PDF's own text for the page, where it has one. */
  textLayer(index: number): string | null;
  /**
   * The same, character by character with its box in the rendered page's pixels (text-layer.ts matches them to lines).
   */
  textLayerChars(index: number): LayerChar[] | null;
  /** Free what the source holds outside the JavaScript heap (a PDF's WebAssembly copy); idempotent. */
  close(): void;
}

function pickPages(pageCount: number, range: string | undefined, file: string, limits: SourceLimits): number[] {
  if (pageCount === 0) throw new DocumentError('EMPTY_DOCUMENT', file, 'the document has no pages');
  if (range !== undefined && range.trim() !== '') {
    const pages = parsePageRange(range, pageCount, file);
    if (pages.length > limits.maxPages) {
      throw new DocumentError(
        'TOO_MANY_PAGES',
        file,
        `the range asks for ${pages.length} pages; at most ${limits.maxPages} per request`,
      );
    }
    return pages;
  }
  if (pageCount > limits.maxPages) {
    throw new DocumentError(
      'TOO_MANY_PAGES',
      file,
      `the document has ${pageCount} pages; at most ${limits.maxPages} per ` +
        `request: send a page range such as "0-${limits.maxPages - 1}"`,
    );
  }
  return Array.from({ length: pageCount }, (_, i) => i);
}

/** The PDF opened, its page count and the pages to read; on any failure it is freed and the error thrown. */
function openPdfDocument(
  m: MupdfModule,
  bytes: Uint8Array,
  file: string,
  range: string | undefined,
  limits: SourceLimits,
): { doc: mupdf.Document; pageCount: number; pages: number[] } {
  let doc: mupdf.Document;
  drainLog();
  try {
    doc = m.Document.openDocument(bytes, 'application/pdf');
  } catch (e) {
    drainLog();
    throw new DocumentError('CORRUPT_PDF', file, `the PDF cannot be opened (${(e as Error).message})`);
  }
  // The document lives in WebAssembly memory, which the garbage collector does not see: free it on every way out.
  let pageCount: number;
  let pages: number[];
  try {
    if (doc.needsPassword())
      throw new DocumentError('ENCRYPTED_PDF', file, 'the PDF is encrypted with a password; send it decrypted');
    try {
      pageCount = doc.countPages();
    } catch (e) {
      throw new DocumentError('CORRUPT_PDF', file, `the PDF's page tree cannot be read (${(e as Error).message})`);
    }
    pages = pickPages(pageCount, range, file, limits);
  } catch (e) {
    drainLog();
    doc.destroy();
    throw e;
  }
  return { doc, pageCount, pages };
}

// A page that comes out blank from a damaged file is a CORRUPT_PDF, not an empty success: mupdf says so on its
// log (mupdf.ts), not with an exception.
function openPdf(
  m: MupdfModule,
  bytes: Uint8Array,
  file: string,
  range: string | undefined,
  limits: SourceLimits,
): DocumentSource {
  const { doc, pageCount, pages } = openPdfDocument(m, bytes, file, range, limits);
  /** What mupdf said while opening it: a repaired cross-reference table, missing objects. */
  const damage = drainLog().filter((m) => /repair|missing|cannot find|broken|format error/i.test(m));
  let closed = false;
  const texts = new Map<number, string | null>();
  const load = (i: number): mupdf.Page => {
    if (closed) throw new Error(`${file}: the document source is closed`); // a caller's bug, not the input's
    try {
      return doc.loadPage(i) as mupdf.Page;
    } catch (e) {
      throw new DocumentError('CORRUPT_PDF', file, `page ${i} cannot be read (${(e as Error).message})`);
    }
  };
  return {
    format: 'pdf',
    pageCount,
    pages,
    close(): void {
      if (!closed) doc.destroy();
      closed = true;
    },
    async render(i: number): Promise<GrayPage> {
      drainLog();
      const page = load(i);
      let out: GrayPage;
      try {
        out = renderPage(m, page, i, file, limits);
      } finally {
        page.destroy(); // WASM memory: a long PDF must not keep every page it has shown
      }
      const said = drainLog();
      // A blank page is a blank page, unless mupdf had to patch the file or the page up to draw it.
      if ((damage.length || said.length) && !out.data.some((v) => v < 128)) {
        throw new DocumentError(
          'CORRUPT_PDF',
          file,
          `page ${i} is damaged and renders blank (mupdf: ${[...damage, ...said][0]})`,
        );
      }
      return out;
    },
    async pixels(i: number): Promise<number> {
      const page = load(i);
      try {
        return renderSize(page, limits).pixels;
      } finally {
        page.destroy();
      }
    },
    textLayer(i: number): string | null {
      if (!texts.has(i)) texts.set(i, pageText(load(i)));
      return texts.get(i) ?? null;
    },
    textLayerChars(i: number): LayerChar[] | null {
      return pageChars(load(i), limits);
    },
  };
}

/** A page's text layer, whitespace tidied; null where it has none (or none that can be read). Frees the page. */
function pageText(page: mupdf.Page): string | null {
  let text: string | null = null;
  try {
    const st = page.toStructuredText('preserve-whitespace');
    try {
      text =
        st
          .asText()
          .replace(/[ \t]+/g, ' ')
          .replace(/\n\s*\n+/g, '\n')
          .trim() || null;
    } finally {
      st.destroy();
    }
  } catch {
    text = null; // no usable text layer: drafting simply has no reference
  } finally {
    page.destroy();
  }
  return text;
}

/** A page's text layer character by character, boxed in the rendered page's pixels; null where it has none. */
function pageChars(page: mupdf.Page, limits: SourceLimits): LayerChar[] | null {
  try {
    const [x0, y0] = page.getBounds();
    const scale = limits.pdfDpi / 72;
    const st = page.toStructuredText('preserve-whitespace');
    try {
      const out: LayerChar[] = [];
      st.walk({
        onChar(c, _origin, _font, _size, q) {
          const xs = [q[0], q[2], q[4], q[6]];
          const ys = [q[1], q[3], q[5], q[7]];
          const [l, t] = [Math.min(...xs), Math.min(...ys)];
          out.push({
            c,
            x: (l - x0) * scale,
            y: (t - y0) * scale,
            width: (Math.max(...xs) - l) * scale,
            height: (Math.max(...ys) - t) * scale,
          });
        },
      });
      return out.length ? out : null;
    } finally {
      st.destroy();
    }
  } catch {
    return null; // no usable text layer: the reading stands on the model alone
  } finally {
    page.destroy();
  }
}

/** A PDF page's size drawn at the PDF resolution. */
function renderSize(page: mupdf.Page, limits: SourceLimits): { w: number; h: number; scale: number; pixels: number } {
  const [x0, y0, x1, y1] = page.getBounds();
  const scale = limits.pdfDpi / 72;
  const w = Math.ceil((x1 - x0) * scale);
  const h = Math.ceil((y1 - y0) * scale);
  return { w, h, scale, pixels: w * h };
}

/** A page drawn in gray at the PDF resolution; refused where it would be over the pixel limit. */
function renderPage(m: MupdfModule, page: mupdf.Page, i: number, file: string, limits: SourceLimits): GrayPage {
  const { w, h, scale } = renderSize(page, limits);
  if (w * h > limits.maxPixels) {
    throw new DocumentError(
      'IMAGE_TOO_LARGE',
      file,
      `page ${i} would render at ${w}x${h}, over the limit of ${limits.maxPixels} pixels`,
    );
  }
  let pix: mupdf.Pixmap | null = null;
  try {
    pix = page.toPixmap(m.Matrix.scale(scale, scale), m.ColorSpace.DeviceGray, false);
    const width = pix.getWidth();
    const height = pix.getHeight();
    const stride = pix.getStride();
    const src = pix.getPixels();
    const data = new Uint8Array(width * height);
    for (let y = 0; y < height; y++) data.set(src.subarray(y * stride, y * stride + width), y * width);
    return { width, height, data };
  } catch (e) {
    throw new DocumentError('CORRUPT_PDF', file, `page ${i} cannot be rendered (${(e as Error).message})`);
  } finally {
    pix?.destroy();
  }
}

/** An image page's pixels from its header alone (0 where the header cannot be read: decoding will say why). */
async function imagePixels(bytes: Uint8Array, page: number | undefined): Promise<number> {
  const sharp = await loadSharp();
  try {
    const m = await sharp(bytes, { limitInputPixels: false, ...(page !== undefined ? { page } : {}) }).metadata();
    return (m.width ?? 0) * (m.height ?? 0);
  } catch {
    return 0;
  }
}

async function openImage(
  bytes: Uint8Array,
  file: string,
  format: SniffedFormat,
  range: string | undefined,
  limits: SourceLimits,
): Promise<DocumentSource> {
  let pageCount = 1;
  if (format === 'tiff') {
    const sharp = await loadSharp();
    try {
      pageCount = (await sharp(bytes, { limitInputPixels: false }).metadata()).pages ?? 1;
    } catch (e) {
      throw new DocumentError('CORRUPT_IMAGE', file, `the TIFF header cannot be read (${(e as Error).message})`);
    }
  }
  const pages = pickPages(pageCount, range, file, limits);
  return {
    format,
    pageCount,
    pages,
    render: (i) => decodeImage(bytes, file, limits, pageCount > 1 ? i : undefined),
    pixels: (i) => imagePixels(bytes, pageCount > 1 ? i : undefined),
    textLayer: () => null,
    textLayerChars: () => null,
    close: () => undefined, // sharp reads the bytes afresh per page: nothing held
  };
}

export async function openSource(
  bytes: Uint8Array,
  file: string,
  range?: string,
  limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
): Promise<DocumentSource> {
  const format = sniffOrRefuse(bytes, file, 'document');
  return format === 'pdf'
    ? openPdf(await loadMupdf(), bytes, file, range, limits)
    : openImage(bytes, file, format, range, limits);
}
