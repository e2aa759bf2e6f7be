/** The word-level renderings of a read document, by name: what `--format` and the API's job formats offer. */
import { WORD_LEVEL_FORMATS } from '../../options/reading-options.js';
import type { PageOut } from '../assemble.js';
import { toAlto } from './alto.js';
import { toHocr } from './hocr.js';
import { searchablePdf } from './searchable-pdf.js';
import { toTsv } from './tsv.js';

export const WORD_FORMATS = WORD_LEVEL_FORMATS;
export type WordFormat = (typeof WORD_FORMATS)[number];

export const WORD_FORMAT_TYPES: Record<WordFormat, { mime: string; extension: string }> = {
  hocr: { mime: 'text/html', extension: 'hocr' },
  alto: { mime: 'application/xml', extension: 'alto.xml' },
  tsv: { mime: 'text/tab-separated-values', extension: 'tsv' },
  pdf: { mime: 'application/pdf', extension: 'pdf' },
};

export function isWordFormat(f: string): f is WordFormat {
  return (WORD_FORMATS as readonly string[]).includes(f);
}

export interface RenderInput {
  /** The input document as it came in (the searchable PDF is built on it). */
  bytes: Uint8Array;
  fileName: string;
  /** Its sniffed format ('pdf', 'jpeg', ...). */
  format: string;
  pages: readonly PageOut[];
  pdfDpi: number;
  software: { name: string; version: string };
}

/** The text renderings (hOCR, ALTO, TSV). */
export function renderTextFormat(format: Exclude<WordFormat, 'pdf'>, input: RenderInput): string {
  switch (format) {
    case 'hocr':
      return toHocr(input.pages, {
        fileName: input.fileName,
        software: `${input.software.name} ${input.software.version}`,
      });
    case 'alto':
      return toAlto(input.pages, {
        fileName: input.fileName,
        softwareName: input.software.name,
        softwareVersion: input.software.version,
      });
    case 'tsv':
      return toTsv(input.pages);
  }
}

/** One rendering: text formats as UTF-8 text, the searchable PDF as bytes. */
export async function renderWordFormat(format: WordFormat, input: RenderInput): Promise<string | Uint8Array> {
  if (format === 'pdf')
    return searchablePdf({ bytes: input.bytes, format: input.format, pages: input.pages, pdfDpi: input.pdfDpi });
  return renderTextFormat(format, input);
}
