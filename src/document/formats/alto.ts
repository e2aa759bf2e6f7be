/**
 * ALTO 4 (XML, alto-4-4.xsd): Page > PrintSpace > TextBlock > TextLine > String (HPOS/VPOS/WIDTH/HEIGHT in pixels
 * of the page as it came in, WC 0-1; Glyphs with GC where the reading has character boxes) with SP between words,
 * in reading order. Block kinds are StructureTags the blocks point at (TAGREFS: heading, paragraph, list_item,
 * page_header, ...); a table is a ComposedBlock of TYPE table and a figure an Illustration.
 */
import type { BlockOut, LineOut, PageOut } from '../assemble.js';
import { type Box, unionBox } from '../layout/ink.js';
import { blockBox, lineBox, wordsOf } from './words-of.js';
import { xmlEscape } from './xml.js';

export interface AltoOptions {
  fileName: string;
  /** Software name and version for OCRProcessing. */
  softwareName: string;
  softwareVersion: string;
}

const pos = (b: Box): string => `HPOS="${b.x}" VPOS="${b.y}" WIDTH="${b.width}" HEIGHT="${b.height}"`;

function line(l: LineOut, id: string): string {
  const words = wordsOf(l);
  const parts: string[] = [];
  words.forEach((w, k) => {
    if (k) {
      const prev = words[k - 1].box;
      parts.push(
        `<SP WIDTH="${Math.max(0, w.box.x - prev.x - prev.width)}" HPOS="${prev.x + prev.width}" VPOS="${l.box.y}"/>`,
      );
    }
    const sid = `${id}_${k + 1}`;
    const head = `<String ID="${sid}" ${pos(w.box)} CONTENT="${xmlEscape(w.text)}" WC="${w.confidence.toFixed(3)}"`;
    // Character boxes, where the reading has them, as the String's Glyphs (one per character, in order).
    const glyphs = w.chars
      ?.map(
        (c, j) =>
          `<Glyph ID="${sid}_${j + 1}" CONTENT="${xmlEscape(c.text)}" GC="${c.confidence.toFixed(3)}" ${pos(c.box)}/>`,
      )
      .join('');
    parts.push(glyphs ? `${head}>${glyphs}</String>` : `${head}/>`);
  });
  return `          <TextLine ID="${id}" ${pos(lineBox(l))}>${parts.join('')}</TextLine>`;
}

function textBlock(b: BlockOut, id: string): string {
  const lines = b.lines.filter((l) => l.text.trim());
  if (!lines.length) return '';
  const body = lines.map((l, j) => line(l, `${id}_l${j + 1}`)).join('\n');
  return `        <TextBlock ID="${id}" ${pos(blockBox(b))} TAGREFS="tag_${b.type}">\n${body}\n        </TextBlock>`;
}

function block(b: BlockOut, id: string): string {
  if (b.type === 'figure') return `        <Illustration ID="${id}" ${pos(b.box)} TAGREFS="tag_figure"/>`;
  if (b.type === 'table') {
    const inner = textBlock(b, `${id}_t`);
    return inner
      ? `        <ComposedBlock ID="${id}" ${pos(blockBox(b))} TYPE="table" ` +
          `TAGREFS="tag_table">\n${inner}\n        </ComposedBlock>`
      : '';
  }
  return textBlock(b, id);
}

function page(pg: PageOut): string {
  const p = pg.index + 1;
  const full = { x: 0, y: 0, width: pg.width, height: pg.height };
  const blocks = pg.blocks
    .map((b, k) => block(b, `p${p}_b${k + 1}`))
    .filter(Boolean)
    .join('\n');
  return [
    `    <Page ID="page_${p}" PHYSICAL_IMG_NR="${p}" WIDTH="${pg.width}" HEIGHT="${pg.height}">`,
    `      <PrintSpace ${pos(pg.blocks.length ? unionBox(pg.blocks.map((b) => b.box)) : full)}>`,
    blocks,
    '      </PrintSpace>',
    '    </Page>',
  ]
    .filter(Boolean)
    .join('\n');
}

export function toAlto(pages: readonly PageOut[], opts: AltoOptions): string {
  const kinds = [...new Set(pages.flatMap((p) => p.blocks.map((b) => b.type)))];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#" ' +
      'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
      'xsi:schemaLocation="http://www.loc.gov/standards/alto/ns-v4# ' +
      'http://www.loc.gov/standards/alto/v4/alto-4-4.xsd" ' +
      'SCHEMAVERSION="4.4">',
    '  <Description>',
    '    <MeasurementUnit>pixel</MeasurementUnit>',
    `    <sourceImageInformation><fileName>${xmlEscape(opts.fileName)}</fileName></sourceImageInformation>`,
    '    <OCRProcessing ID="ocr_1"><ocrProcessingStep><processingSoftware>',
    `      <softwareName>${xmlEscape(opts.softwareName)}</softwareName>` +
      `<softwareVersion>${xmlEscape(opts.softwareVersion)}</softwareVersion>`,
    '    </processingSoftware></ocrProcessingStep></OCRProcessing>',
    '  </Description>',
    ...(kinds.length
      ? ['  <Tags>', ...kinds.map((k) => `    <StructureTag ID="tag_${k}" LABEL="${k}"/>`), '  </Tags>']
      : []),
    '  <Layout>',
    ...pages.map(page),
    '  </Layout>',
    '</alto>',
    '',
  ].join('\n');
}
