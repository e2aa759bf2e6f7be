/**
 * A searchable PDF: every page read gets an invisible text layer (text render mode 3) placed word by word over
 * its image, each word sized and stretched to its box, so viewers can select, search and copy it and
 * `pdftotext` gives the text back. An image input becomes one PDF page per page read, its own image drawn full
 * page (a JPEG kept byte for byte, anything else as lossless PNG). A PDF input keeps its pages as they are, with
 * the text layer added only to the pages that had none; pages not read are kept too. Written with mupdf.
 */
import type * as mupdf from 'mupdf';
import { loadMupdf, type MupdfModule } from '../mupdf.js';
import { loadSharp } from '../sharp.js';
import type { PageOut } from '../assemble.js';
import { concat, invert, mapBox, type Matrix, readToSource } from '../page-geometry.js';
import { wordsOf } from './words-of.js';

export interface SearchablePdfInput {
  bytes: Uint8Array;
  /** The input's format, as sniffed ('pdf', 'jpeg', 'png', 'tiff', ...). */
  format: string;
  /** The pages as read: boxes in pixels of the page as it came in. */
  pages: readonly PageOut[];
  /** PDF inputs: the resolution their pages were rendered at to be read. */
  pdfDpi: number;
}

/** Whether a PDF page has text of its own (born digital, or already made searchable). */
function hasText(page: mupdf.PDFPage): boolean {
  const st = page.toStructuredText('');
  try {
    return st.asText().trim().length > 0;
  } finally {
    st.destroy();
  }
}

/**
 * Resolution assumed for an image that does not say its own, or says under 100 dpi (72 is many encoders'
 * placeholder, not a scan's resolution): it only sets the PDF page's size in inches.
 */
const DEFAULT_IMAGE_DPI = 200;
/**
 * The built-in Helvetica's ascent and descent (font units per em, from its FontBBox that PDF readers use for a
 * glyph's box): a word of size s spans (ASCENT - DESCENT) * s from top to bottom.
 */
const ASCENT = 0.93;
const DESCENT = -0.22;
const FONT_KEY = 'SpeculaOCR';
/** Least gap between two words of the layer, in font sizes (poppler breaks words at 0.1). */
const WORD_GAP = 0.15;

const num = (x: number): string => (Math.abs(x) < 1e-6 ? '0' : x.toFixed(4).replace(/\.?0+$/, ''));

/**
 * The text layer's content stream for one page. `toPdf` maps the page's top-left, y-down space in points (its
 * pixels as it came in, over `pxPerPt`) to the PDF's user space.
 */
function textLayer(page: PageOut, font: mupdf.Font, pxPerPt: number, toPdf: Matrix): string {
  const ops: string[] = ['BT', '3 Tr', `/${FONT_KEY} 1 Tf`];
  // Words run along the page as it was read (turned upright, straightened): each is written in that frame, then
  // carried to the page as it came in, so a page scanned sideways gets its text layer sideways too.
  // A photographed sheet's words are not a turn and a skew away from the photograph: each is written upright in
  // the box that holds it there.
  const toSource = page.sheet
    ? ([1, 0, 0, 1, 0, 0] as Matrix)
    : readToSource({
        width: page.width,
        height: page.height,
        turn: page.rotation as 0 | 90 | 180 | 270,
        degrees: page.skew ?? 0,
      });
  const toRead = invert(toSource);
  const readToPdf = concat(concat(toSource, [1 / pxPerPt, 0, 0, 1 / pxPerPt, 0, 0]), toPdf);
  for (const block of page.blocks) {
    for (const line of block.lines) {
      const words = wordsOf(line);
      const boxes = words.map((w) => mapBox(toRead, w.box));
      words.forEach((w, i) => {
        const gids = Array.from(w.text, (ch) => font.encodeCharacter(ch.codePointAt(0) ?? 32));
        const advance = gids.reduce((s, g) => s + font.advanceGlyph(g), 0);
        if (!advance) return;
        const b = boxes[i];
        const size = b.height / (ASCENT - DESCENT);
        // Text extraction tells words apart by the gap between them (poppler: a tenth of the font size), not by a
        // space character: a word whose ink runs into the next one's ends that much short of it in the layer.
        const next = boxes[i + 1];
        const width = next ? Math.max(b.width / 2, Math.min(b.width, next.x - b.x - WORD_GAP * size)) : b.width;
        const stretch = width / (advance * size);
        // Text space (y up, baseline at 0) -> the read page's y-down pixels -> the page as it came in -> PDF space.
        const tm = concat([stretch * size, 0, 0, -size, b.x, b.y + ASCENT * size], readToPdf);
        const hex = gids.map((g) => g.toString(16).padStart(4, '0')).join('');
        ops.push(`${tm.map(num).join(' ')} Tm <${hex}> Tj`);
      });
    }
  }
  ops.push('ET');
  return ops.join('\n');
}

async function imagePdf(m: MupdfModule, input: SearchablePdfInput): Promise<mupdf.PDFDocument> {
  const sharp = await loadSharp();
  const doc = new m.PDFDocument();
  const font = new m.Font('Helvetica');
  const fontRef = doc.addFont(font);
  for (const page of input.pages) {
    const multi = input.format === 'tiff' || input.format === 'gif' || input.format === 'webp';
    const img = sharp(input.bytes, { limitInputPixels: false, ...(multi ? { page: page.index } : {}) });
    const meta = await img.metadata();
    const dpi = meta.density && meta.density >= 100 ? meta.density : DEFAULT_IMAGE_DPI;
    const encoded = input.format === 'jpeg' ? input.bytes : await img.png().toBuffer();
    const image = new m.Image(encoded);
    const pxPerPt = dpi / 72;
    const w = page.width / pxPerPt;
    const h = page.height / pxPerPt;
    const resources = doc.newDictionary();
    const xobjects = doc.newDictionary();
    xobjects.put('Im0', doc.addImage(image));
    resources.put('XObject', xobjects);
    const fonts = doc.newDictionary();
    fonts.put(FONT_KEY, fontRef);
    resources.put('Font', fonts);
    // Page space (y down, points) -> PDF space (y up).
    const content =
      `q ${num(w)} 0 0 ${num(h)} 0 0 cm /Im0 Do ` + `Q\n${textLayer(page, font, pxPerPt, [1, 0, 0, -1, 0, h])}`;
    doc.insertPage(-1, doc.addPage([0, 0, w, h], 0, resources, content));
  }
  return doc;
}

function pdfWithLayers(m: MupdfModule, input: SearchablePdfInput): mupdf.PDFDocument {
  const doc = new m.PDFDocument(input.bytes);
  const font = new m.Font('Helvetica');
  let fontRef: mupdf.PDFObject | null = null;
  const pxPerPt = input.pdfDpi / 72;
  for (const page of input.pages) {
    const pdfPage = doc.loadPage(page.index);
    if (hasText(pdfPage)) {
      pdfPage.destroy();
      continue;
    }
    const obj = pdfPage.getObject();
    const [x0, y0] = pdfPage.getBounds();
    // The page's rendered pixels start at its bounds' corner; getTransform maps PDF space to that y-down space.
    const toPage = pdfPage.getTransform() as Matrix;
    const toPdf = concat([1, 0, 0, 1, x0, y0], invert(toPage));
    fontRef ??= doc.addFont(font);
    let resources = obj.getInheritable('Resources');
    if (resources.isNull()) {
      resources = doc.newDictionary();
    } else {
      resources = resources.resolve();
    }
    // A copy, so a Resources dictionary shared with other pages is not changed under them.
    const own = doc.newDictionary();
    resources.forEach((v: mupdf.PDFObject, k: string | number) => own.put(k, v));
    const fonts = doc.newDictionary();
    const had = resources.get('Font');
    if (!had.isNull()) had.resolve().forEach((v: mupdf.PDFObject, k: string | number) => fonts.put(k, v));
    fonts.put(FONT_KEY, fontRef);
    own.put('Font', fonts);
    obj.put('Resources', own);
    // The page's own content is wrapped in q/Q so whatever state it leaves does not move the text layer.
    const contents = doc.newArray();
    contents.push(doc.addStream('q\n', {}));
    const old = obj.get('Contents');
    if (old.isArray()) {
      for (let i = 0; i < old.length; i++) contents.push(old.get(i));
    } else if (!old.isNull()) {
      contents.push(old);
    }
    contents.push(doc.addStream(`Q\n${textLayer(page, font, pxPerPt, toPdf)}`, {}));
    obj.put('Contents', contents);
    pdfPage.destroy();
  }
  return doc;
}

export async function searchablePdf(input: SearchablePdfInput): Promise<Uint8Array> {
  const m = await loadMupdf();
  const doc = input.format === 'pdf' ? pdfWithLayers(m, input) : await imagePdf(m, input);
  try {
    const buf = doc.saveToBuffer('compress,garbage');
    try {
      return new Uint8Array(buf.asUint8Array());
    } finally {
      buf.destroy();
    }
  } finally {
    doc.destroy();
  }
}
