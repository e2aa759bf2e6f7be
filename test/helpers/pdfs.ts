/** PDFs made for tests: image pages through mupdf, encrypted and empty ones, and a 10,000-page one by hand. */
import * as mupdf from 'mupdf';

/** A PDF whose pages show these PNG/JPEG images, one per page, with an optional text layer line per page. */
export function pdfOfImages(images: readonly Uint8Array[], opts: { encrypt?: boolean } = {}): Uint8Array {
  const doc = new mupdf.PDFDocument();
  for (const bytes of images) {
    const image = new mupdf.Image(bytes);
    const w = image.getWidth() * 0.6; // 120 dpi worth of points
    const h = image.getHeight() * 0.6;
    const ref = doc.addImage(image);
    const page = doc.addPage([0, 0, w, h], 0, { XObject: { Im0: ref } }, `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q`);
    doc.insertPage(-1, page);
  }
  const options = opts.encrypt ? 'encrypt=aes-256,user-password=secret,owner-password=owner' : 'compress';
  return doc.saveToBuffer(options).asUint8Array().slice();
}

export function emptyPdf(): Uint8Array {
  return new mupdf.PDFDocument().saveToBuffer('').asUint8Array().slice();
}

/**
 * A valid PDF with `n` blank pages, written directly (one shared content stream), so tests can make huge ones cheaply.
 */
export function blankPdf(n: number): Uint8Array {
  const parts: string[] = [];
  const offsets: number[] = [];
  let length = 0;
  const emit = (s: string): void => {
    parts.push(s);
    length += Buffer.byteLength(s, 'latin1');
  };
  const obj = (num: number, body: string): void => {
    offsets[num] = length;
    emit(`${num} 0 obj\n${body}\nendobj\n`);
  };
  emit('%PDF-1.4\n');
  const first = 4;
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  const kids = Array.from({ length: n }, (_, i) => `${first + i} 0 R`).join(' ');
  obj(2, `<< /Type /Pages /Count ${n} /Kids [${kids}] >>`);
  obj(3, '<< /Length 0 >>\nstream\n\nendstream');
  for (let i = 0; i < n; i++) obj(first + i, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 3 0 R >>');
  const size = first + n;
  const xref = length;
  emit(`xref\n0 ${size}\n0000000000 65535 f \n`);
  for (let i = 1; i < size; i++) emit(`${String(offsets[i]).padStart(10, '0')} 00000 n \n`);
  emit(`trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.from(parts.join(''), 'latin1');
}

/** A born-digital page: these lines set in Times at 14 pt, so the PDF has a text layer. */
export function pdfWithText(lines: readonly string[]): Uint8Array {
  const doc = new mupdf.PDFDocument();
  const font = doc.addSimpleFont(new mupdf.Font('Times-Roman'));
  const esc = (s: string): string => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const body = lines.map((l, i) => `${i ? '0 -22 Td ' : ''}(${esc(l)}) Tj`).join(' ');
  const page = doc.addPage(
    [0, 0, 612, 200 + 22 * lines.length],
    0,
    { Font: { F1: font } },
    `BT /F1 14 Tf 72 ${150 + 22 * lines.length} Td ${body} ET`,
  );
  doc.insertPage(-1, page);
  return doc.saveToBuffer('compress').asUint8Array().slice();
}

/**
 * A scan with an invisible text layer (as OCR software writes one): the image at 120 dpi, and each line's `text`
 * drawn in render mode 3 over its `box` (image pixels), stretched to the box's width.
 */
export function pdfOfImageWithLayer(
  image: Uint8Array,
  lines: readonly { text: string; box: { x: number; y: number; width: number; height: number } }[],
): Uint8Array {
  const doc = new mupdf.PDFDocument();
  const img = new mupdf.Image(image);
  const pt = 0.6; // 120 dpi worth of points per pixel
  const [w, h] = [img.getWidth() * pt, img.getHeight() * pt];
  const helvetica = new mupdf.Font('Helvetica');
  const font = doc.addSimpleFont(helvetica);
  const esc = (s: string): string => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const text = lines
    .map(({ text: t, box }) => {
      const size = box.height * pt * 0.7;
      const em = [...t].reduce(
        (sum, c) => sum + helvetica.advanceGlyph(helvetica.encodeCharacter(c.codePointAt(0) ?? 32), 0),
        0,
      );
      const stretch = (100 * box.width * pt) / Math.max(1e-6, em * size);
      return (
        `BT 3 Tr /F1 ${size.toFixed(2)} Tf ${stretch.toFixed(2)} Tz ` +
        `${(box.x * pt).toFixed(2)} ` +
        `${(h - (box.y + 0.8 * box.height) * pt).toFixed(2)} Td (${esc(t)}) Tj ` +
        `ET`
      );
    })
    .join('\n');
  const page = doc.addPage(
    [0, 0, w, h],
    0,
    { XObject: { Im0: doc.addImage(img) }, Font: { F1: font } },
    `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q\n${text}`,
  );
  doc.insertPage(-1, page);
  return doc.saveToBuffer('compress').asUint8Array().slice();
}
