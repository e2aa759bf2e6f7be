/** A job's pages → blocks (type, box, reading order, markdown, confidence) → lines. */
import type { BlockOut, LineOut, PageOut, PageWarning as PageWarningShape } from '../src/document/assemble.js';
import { BLOCK_TYPES, type TableSpan } from '../src/document/layout/analyze.js';
import type { Box as BoxShape } from '../src/document/layout/ink.js';
import type { ScriptShare as ScriptShareShape } from '../src/document/page-language.js';
import type { InlineFormulaOut } from '../src/document/page-tree.js';
import type { CharOut, WordOut } from '../src/document/word-boxes.js';
import { builder } from './builder.js';

export const Box = builder.objectRef<BoxShape>('Box').implement({
  description: 'A rectangle in page pixels (PDF pages are rendered at 200 dpi).',
  fields: (t) => ({
    x: t.exposeInt('x', { description: "Left edge, in pixels from the page's left." }),
    y: t.exposeInt('y', { description: "Top edge, in pixels from the page's top." }),
    width: t.exposeInt('width', { description: 'Width in pixels.' }),
    height: t.exposeInt('height', { description: 'Height in pixels.' }),
  }),
});

export const Character = builder.objectRef<CharOut>('Character').implement({
  description: 'A character of a word: the columns the alignment gives it, drawn tight round its ink.',
  fields: (t) => ({
    text: t.exposeString('text', { description: 'The character as read.' }),
    box: t.field({
      type: Box,
      description: "Where the character lies on the page: its own ink's width, its line's ink height.",
      resolve: (c) => c.box,
    }),
    confidence: t.exposeFloat('confidence', { description: 'The probability the model gave it, 0 to 1.' }),
  }),
});

export const Word = builder.objectRef<WordOut>('Word').implement({
  description: "A word of a line: where the CTC alignment of the line's final text puts it, drawn tight round its ink.",
  fields: (t) => ({
    text: t.exposeString('text', { description: 'The word as read.' }),
    box: t.field({
      type: Box,
      description: "Where the word lies on the page: its own ink's width, its line's ink height.",
      resolve: (w) => w.box,
    }),
    confidence: t.exposeFloat('confidence', { description: "Mean probability of the word's characters, 0 to 1." }),
    characters: t.field({
      type: [Character],
      nullable: true,
      complexity: { field: 1, multiplier: 1 },
      description: "The word's characters, left to right; null unless the job asked for characters.",
      resolve: (w) => w.chars ?? null,
    }),
  }),
});

export const LineFormula = builder.enumType('LineFormula', {
  description: 'How the formula reader took a line.',
  values: {
    LATEX: { value: 'latex' as const, description: "Read as a formula: the line's text is LaTeX." },
    FALLBACK: {
      value: 'fallback' as const,
      description:
        "The formula reader's LaTeX did not close (unbalanced, unknown " +
        'command, length cap): the text reading stands, flagged.',
    },
  },
});

export const InlineFormula = builder.objectRef<InlineFormulaOut>('InlineFormula').implement({
  description:
    'A formula set within a line of text, read as LaTeX by the formula ' +
    "reader: it stands in the line's text as `$latex$`.",
  fields: (t) => ({
    latex: t.exposeString('latex', { description: 'The formula as LaTeX.' }),
    box: t.field({
      type: Box,
      description: "Where the formula lies on the page: its own ink's width, its line's ink height.",
      resolve: (f) => f.box,
    }),
    confidence: t.exposeFloat('confidence', {
      description: "Mean probability of the formula reader's tokens, 0 to 1.",
    }),
    start: t.exposeInt('start', {
      description: "Where `$latex$` starts in the line's text (UTF-16 code units, 0-based).",
    }),
    end: t.exposeInt('end', { description: "Where `$latex$` ends in the line's text (exclusive)." }),
  }),
});

export const Distrust = builder.enumType('Distrust', {
  description: "Why a line's reading is not trusted.",
  values: {
    LOW_CONFIDENCE: {
      value: 'low-confidence' as const,
      description: 'The model gave its tokens under even odds on average: it was guessing.',
    },
    READERS_DISAGREE: {
      value: 'readers-disagree' as const,
      description: 'Unsure, and the CTC head and the decoder read more than half the characters differently.',
    },
    REPEATS: {
      value: 'repeats' as const,
      description: 'Unsure, and a few characters repeat in a loop (a decoder stuck on what it cannot read).',
    },
  },
});

export const PageWarningKind = builder.enumType('PageWarningKind', {
  description: 'What went wrong in reading a page.',
  values: {
    UNREADABLE_LINES: {
      value: 'UNREADABLE_LINES' as const,
      description: 'Some lines could not be read with confidence (Line.unreadable).',
    },
    LITTLE_TEXT: {
      value: 'LITTLE_TEXT' as const,
      description: "Far fewer characters were read than the page's text lines hold: most of it could not be read.",
    },
    UNREAD_SCRIPT: {
      value: 'UNREAD_SCRIPT' as const,
      description:
        'The page is in a script the model does not read (Hangul, Han, Arabic, ...; Page.scripts names it): ' +
        "its lines hold the CTC head's reading, marked Line.unread, unless the job turned the script gate off.",
    },
  },
});

export const ScriptShare = builder.objectRef<ScriptShareShape>('ScriptShare').implement({
  description: "A script of a page and its share of the page's letters.",
  fields: (t) => ({
    script: t.exposeString('script', {
      description: 'Latin, Greek or Cyrillic (read), or the name of a script the model does not read (Hangul, ...).',
    }),
    share: t.exposeFloat('share', { description: "Its share of the page's letters, 0 to 1." }),
  }),
});

export const PageWarning = builder.objectRef<PageWarningShape>('PageWarning').implement({
  description: "Something to know about a page's reading beyond its text.",
  fields: (t) => ({
    kind: t.field({ type: PageWarningKind, description: 'What went wrong.', resolve: (w) => w.kind }),
    message: t.exposeString('message', { description: 'In words, with the counts.' }),
  }),
});

export const Point = builder.objectRef<{ x: number; y: number }>('Point').implement({
  description: 'A point in page pixels.',
  fields: (t) => ({
    x: t.exposeFloat('x', { description: "Pixels from the page's left." }),
    y: t.exposeFloat('y', { description: "Pixels from the page's top." }),
  }),
});

export const Line = builder.objectRef<LineOut>('Line').implement({
  description: 'One line of text as read, with its box, confidence and, when asked, its words.',
  fields: (t) => ({
    text: t.exposeString('text', { description: "The line's text as read." }),
    box: t.field({ type: Box, description: 'Where the line lies on the page.', resolve: (l) => l.box }),
    confidence: t.float({
      nullable: true,
      description: "Mean probability of the line's tokens.",
      resolve: (l) => l.confidence ?? null,
    }),
    unread: t.boolean({
      description:
        'True where the page was found to be in a script the model never ' +
        'learnt (Hangul, Han, Cyrillic, ...) and this line with it: its text ' +
        "is the CTC head's reading, not decoded, and not to be trusted.",
      resolve: (l) => l.unread ?? false,
    }),
    unreadable: t.boolean({
      description:
        'True where the reading is not to be trusted (see distrust): text ' +
        'holds it as read, and the markdown shows `⟦unreadable⟧` in its place.',
      resolve: (l) => l.unreadable ?? false,
    }),
    distrust: t.field({
      type: Distrust,
      nullable: true,
      description: 'Why the line is unreadable; null where it is not.',
      resolve: (l) => l.distrust ?? null,
    }),
    formula: t.field({
      type: LineFormula,
      nullable: true,
      description:
        'LATEX where the formula reader read this line as a formula (text is ' +
        'then its LaTeX); FALLBACK where its LaTeX did not close, so text is ' +
        'the text reading, with a low confidence; null for text lines.',
      resolve: (l) => l.formula ?? null,
    }),
    inlineFormulas: t.field({
      type: [InlineFormula],
      description:
        'Formulas set within this line of text, left to right, each standing ' +
        'in text as `$latex$`; empty where there are none (a line that is a ' +
        'formula of its own has formula LATEX instead).',
      resolve: (l) => l.inline ?? [],
    }),
    // Stored with the job's result, not fetched: a line's words count once, not ten times over.
    textLayer: t.boolean({
      description:
        "True where the text is the PDF's own text layer for the line: the " +
        "page's layer agrees with the reading, and the model's CTC head found " +
        "the layer's text fits the line at least as well as its own reading " +
        '(job option textLayer).',
      resolve: (l) => l.textLayer ?? false,
    }),
    words: t.field({
      type: [Word],
      nullable: true,
      complexity: { field: 1, multiplier: 1 },
      description: "The line's words, left to right; null unless the job asked for words (or a word-level format).",
      resolve: (l) => l.words ?? null,
    }),
  }),
});

export const BlockType = builder.enumType('BlockType', {
  description: "What a block of the page is (the layout's finding).",
  values: Object.fromEntries(BLOCK_TYPES.map((v) => [v.toUpperCase(), { value: v }])),
});

export const TableCellSpan = builder.objectRef<TableSpan>('TableCellSpan').implement({
  description:
    'A table cell covering more than one grid position: a heading over several columns, a label over several rows.',
  fields: (t) => ({
    row: t.exposeInt('row', { description: 'The grid row of its top-left position (0-based).' }),
    column: t.int({ description: 'The grid column of its top-left position (0-based).', resolve: (s) => s.col }),
    rowSpan: t.exposeInt('rowSpan', { description: 'Grid rows it covers.' }),
    columnSpan: t.int({ description: 'Grid columns it covers.', resolve: (s) => s.colSpan }),
  }),
});

export const TableCellBox = builder
  .objectRef<{ row: number; column: number; box: BoxShape }>('TableCellBox')
  .implement({
    description: "A table cell's text on the page, by the grid position of the cell's top-left.",
    fields: (t) => ({
      row: t.exposeInt('row', { description: 'Grid row, 0-based.' }),
      column: t.exposeInt('column', { description: 'Grid column, 0-based.' }),
      box: t.field({ type: Box, description: "The cell's lines' boxes together.", resolve: (c) => c.box }),
    }),
  });

export const TableStructure = builder.objectRef<NonNullable<BlockOut['table']>>('TableStructure').implement({
  description:
    "A table's grid: its size, the rows that head its columns, and the cells that span (the rest cover one position).",
  fields: (t) => ({
    rows: t.exposeInt('rows', { description: 'Grid rows.' }),
    columns: t.exposeInt('columns', { description: 'Grid columns.' }),
    headerRows: t.exposeInt('headerRows', { description: 'Leading rows that head the columns.' }),
    spans: t.field({
      type: [TableCellSpan],
      description: 'Cells covering more than one grid position.',
      resolve: (s) => s.spans,
    }),
    cellBoxes: t.field({
      type: [TableCellBox],
      description:
        "Where each cell's text lies on the page (its lines' boxes together), row by row; cells without text are " +
        'left out.',
      resolve: (s) =>
        (s.cellBoxes ?? []).flatMap((row, r) => row.flatMap((box, c) => (box ? [{ row: r, column: c, box }] : []))),
    }),
  }),
});

export const Block = builder.objectRef<BlockOut>('Block').implement({
  description: 'A region of the page (paragraph, heading, table, figure ...) in reading order, with its lines.',
  fields: (t) => ({
    type: t.field({ type: BlockType, description: 'What the block is.', resolve: (b) => b.type }),
    order: t.exposeInt('order', { description: 'Position in reading order on the page.' }),
    level: t.int({ nullable: true, description: 'Heading level (1 = largest).', resolve: (b) => b.level ?? null }),
    box: t.field({ type: Box, description: 'Where the block lies on the page.', resolve: (b) => b.box }),
    markdown: t.exposeString('markdown', {
      description:
        'The block as markdown (a figure is `<!-- image -->`, a formula `$$` ' +
        'LaTeX `$$`, a formula in a table cell `$...$`).',
    }),
    confidence: t.float({
      nullable: true,
      description: "Mean confidence of the block's lines; null where the engine gave none (figures).",
      resolve: (b) => b.confidence,
    }),
    lines: t.field({
      type: [Line],
      description: "The block's text lines (a table's cell by cell, row by row; none for a figure).",
      resolve: (b) => b.lines,
    }),
    cells: t.field({
      type: t.listRef(t.listRef('String')),
      nullable: true,
      description: 'Tables: cell text by grid position, row by row (empty where a spanning cell covers the position).',
      resolve: (b) => b.cells ?? null,
    }),
    table: t.field({
      type: TableStructure,
      nullable: true,
      description: "Tables: the grid's size, header rows and spanning cells; null for other blocks.",
      resolve: (b) => b.table ?? null,
    }),
    boxed: t.boolean({
      description: 'True for a block set between rules as a note or a warning is (its markdown is a block quote).',
      resolve: (b) => b.boxed ?? false,
    }),
    latex: t.string({
      nullable: true,
      description: 'Formulas: the LaTeX (the markdown holds it between `$$` lines); null for other blocks.',
      resolve: (b) => b.latex ?? null,
    }),
    formulaNumber: t.string({
      nullable: true,
      description:
        'Formulas: the number printed beside the formula (`3` for `(3)`), kept out of its LaTeX (the markdown ' +
        'shows it as `\\tag{3}`); null where it has none, and for other blocks.',
      resolve: (b) => b.number ?? null,
    }),
  }),
});

export const Page = builder.objectRef<PageOut>('Page').implement({
  description: 'One page of the document as read: its size, its warnings and its blocks in reading order.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: '0-based page number in the document.' }),
    width: t.exposeInt('width', { description: 'Page width in pixels, as the page came in (not turned).' }),
    height: t.exposeInt('height', { description: 'Page height in pixels, as the page came in (not turned).' }),
    rotation: t.int({
      description:
        'Clockwise degrees (0, 90, 180, 270) the page was turned to read it ' +
        "upright; boxes, width and height are the page's as it came in.",
      resolve: (p) => p.rotation ?? 0,
    }), // absent in results stored before it was reported
    skew: t.float({
      description: 'Degrees of skew straightened out to read the page (0 when none).',
      resolve: (p) => p.skew ?? 0,
    }),
    sheet: t.field({
      type: [Point],
      nullable: true,
      description:
        'A photographed page: the corners of the sheet found in it (top-left, ' +
        'top-right, bottom-right, bottom-left), which was straightened before ' +
        'reading; boxes are then the smallest holding each in the photograph. ' +
        'Null for a scan or a rendered page.',
      resolve: (p) => p.sheet ?? null,
    }),
    unreadableLines: t.int({
      description: 'Lines marked unreadable on this page.',
      resolve: (p) => p.unreadableLines ?? 0,
    }),
    warnings: t.field({
      type: [PageWarning],
      description: 'What went wrong in reading this page; empty when nothing did.',
      resolve: (p) => p.warnings ?? [],
    }),
    scripts: t.field({
      type: [ScriptShare],
      description: "The scripts of the page's letters, largest share first; empty on a page without text.",
      resolve: (p) => p.scripts ?? [],
    }),
    language: t.string({
      nullable: true,
      description:
        "The page's language as ISO 639-3 (eng, pol, rus, ell, ...), guessed from the text read; null where " +
        'too little was read to tell.',
      resolve: (p) => p.language ?? null,
    }),
    markdown: t.exposeString('markdown', {
      description: 'The page as markdown (without headers and footers when dropHeadersFooters was set).',
    }),
    blocks: t.field({
      type: [Block],
      description: "The page's blocks in reading order (headers and footers included).",
      resolve: (p) => p.blocks,
    }),
  }),
});
