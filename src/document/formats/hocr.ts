/**
 * hOCR 1.2 (XHTML): ocr_page > ocr_carea > ocr_par > ocr_line > ocrx_word, each with its bbox, words with x_wconf
 * (0-100), and where the reading has character boxes, ocrx_cinfo per character with x_bboxes and x_conf. Blocks keep
 * their reading order; heading lines are ocr_header (as tesseract writes them), a table is an ocr_table float and a
 * figure an ocr_photo; running headers and footers are text areas like the rest. Boxes are in the pixels of the page as
 * it came in (a PDF page as rendered).
 */
import type { BlockOut, LineOut, PageOut } from '../assemble.js';
import type { Box } from '../layout/ink.js';
import type { WordOut } from '../word-boxes.js';
import { blockBox, lineBox, wordsOf } from './words-of.js';
import { xmlEscape } from './xml.js';

export interface HocrOptions {
  /** The input's file name, for each page's `image` property. */
  fileName: string;
  /** The ocr-system meta, e.g. "specula 0.3.0". */
  software: string;
}

const bbox = (b: Box): string => `bbox ${b.x} ${b.y} ${b.x + b.width} ${b.y + b.height}`;

// Tesseract's own line class for heading text, so tools written for its hOCR read ours alike.
const LINE_CLASS: Partial<Record<BlockOut['type'], string>> = { heading: 'ocr_header' };

function wordText(w: WordOut): string {
  // Character boxes as tesseract writes them (hocr_char_boxes): one ocrx_cinfo per character.
  if (!w.chars) return xmlEscape(w.text);
  return w.chars
    .map(
      (c) =>
        `<span class="ocrx_cinfo" title="x_bboxes ${c.box.x} ${c.box.y} ` +
        `${c.box.x + c.box.width} ${c.box.y + c.box.height}; x_conf ` +
        `${(100 * c.confidence).toFixed(2)}">${xmlEscape(c.text)}</span>`,
    )
    .join('');
}

function line(l: LineOut, cls: string, id: string): string {
  const words = wordsOf(l)
    .map(
      (w, k) =>
        `<span class="ocrx_word" ` +
        `id="${id.replace(/^line_/, 'word_')}_${k + 1}" title="${bbox(w.box)}; ` +
        `x_wconf ${Math.round(100 * w.confidence)}">${wordText(w)}</span>`,
    )
    .join(' ');
  return `     <span class="${cls}" id="${id}" title="${bbox(lineBox(l))}; x_size ${l.box.height}">${words}</span>`;
}

function block(b: BlockOut, p: number, k: number): string {
  const id = `${p}_${k}`;
  if (b.type === 'figure') return `   <div class="ocr_photo" id="photo_${id}" title="${bbox(b.box)}"></div>`;
  const lines = b.lines.filter((l) => l.text.trim());
  if (!lines.length) return '';
  const cls = LINE_CLASS[b.type] ?? 'ocr_line';
  const body = lines.map((l, j) => line(l, cls, `line_${id}_${j + 1}`)).join('\n');
  const box = bbox(blockBox(b));
  const par = `    <p class="ocr_par" id="par_${id}" title="${box}">\n${body}\n    </p>`;
  const area = b.type === 'table' ? 'ocr_table' : 'ocr_carea';
  return `   <div class="${area}" id="block_${id}" title="${box}">\n${par}\n   </div>`;
}

function page(pg: PageOut, opts: HocrOptions): string {
  const p = pg.index + 1;
  const blocks = pg.blocks
    .map((b, k) => block(b, p, k + 1))
    .filter(Boolean)
    .join('\n');
  const title =
    `image ${JSON.stringify(opts.fileName)}; ` +
    `${bbox({ x: 0, y: 0, width: pg.width, height: pg.height })}; ppageno ` +
    `${pg.index}`;
  return `  <div class="ocr_page" id="page_${p}" title="${xmlEscape(title)}">\n${blocks}\n  </div>`;
}

export function toHocr(pages: readonly PageOut[], opts: HocrOptions): string {
  const chars = pages.some((p) => p.blocks.some((b) => b.lines.some((l) => l.words?.some((w) => w.chars))));
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" ' +
      '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">',
    '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">',
    ' <head>',
    `  <title>${xmlEscape(opts.fileName)}</title>`,
    '  <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>',
    `  <meta name="ocr-system" content="${xmlEscape(opts.software)}"/>`,
    `  <meta name="ocr-capabilities" content="ocr_page ocr_carea ocr_par ` +
      `ocr_line ocrx_word ocr_header ocr_table ocr_photo ` +
      `ocrp_wconf${chars ? ' ocrx_cinfo' : ''}"/>`,
    ' </head>',
    ' <body>',
    ...pages.map((pg) => page(pg, opts)),
    ' </body>',
    '</html>',
    '',
  ].join('\n');
}
