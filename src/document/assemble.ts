/**
 * Layout + the text of every line -> the page as typed blocks (JSON) and as markdown. Paragraph lines are
 * reflowed, with hyphenated line ends joined; lines that start with a bullet or a number become list items;
 * a header or footer that is only a number becomes the page number; tables become markdown tables; figures
 * stay blocks with their box (markdown `<!-- image -->`, as docling writes it). A line read as a formula is a
 * `formula` block of its own (markdown `$$...$$`) where it stood in a paragraph, and inline math (`$...$`) in a
 * table cell or any other block.
 */
import { unionBox } from './layout/ink.js';
import type { BlockType, LayoutBlock, LayoutTable, PageLayout } from './layout/analyze.js';
import type { BlockOut, LineOut, PageOut } from './page-tree.js';
import {
  codeMarkdown,
  formulaMarkdown,
  headingMarkdown,
  listItemMarkdown,
  paragraphMarkdown,
  quoteMarkdown,
  withDollarMath,
} from './markdown.js';
import { takeFormulaNumbers } from './formula-number.js';
import { boxesTogether, foldCurrencyColumns, tableToMarkdown } from './table-text.js';
import {
  codeText,
  isCode,
  isPageNumber,
  lineText,
  LIST_MARK,
  listItems,
  meanConfidence,
  reflow,
} from './block-text.js';

export { tableMarkdown } from './markdown.js';
export { isPageNumber, reflow, UNREADABLE_MARK } from './block-text.js';
export type { BlockOut, Distrust, InlineFormulaOut, LineOut, PageOut, PageWarning } from './page-tree.js';

export interface AssembleOptions {
  /** Leave page headers, footers and page numbers out of the markdown (they stay in the block tree, flagged). */
  dropHeadersFooters?: boolean;
}

/** Adds a block to the page, numbered in reading order. */
type PushBlock = (b: Omit<BlockOut, 'order'>) => void;

/** A table block: its cells' text by grid position, currency columns folded, and its markdown table. */
function tableBlock(lb: LayoutBlock, grid: LayoutTable, lines: LineOut[]): Omit<BlockOut, 'order'> {
  let k = 0;
  const own = grid.cells.map((row) => row.map((cell) => cell.map(() => lines[k++]).filter((l) => l !== undefined)));
  const read = own.map((row) => row.map((cell) => reflow(cell.map(lineText))));
  const boxes = own.map((row) => row.map((cell) => boxesTogether(cell.map((l) => l.box))));
  const t = foldCurrencyColumns({ cells: read, spans: grid.spans, headerRows: grid.headerRows, boxes });
  const table = {
    rows: t.cells.length,
    columns: t.cells[0]?.length ?? 0,
    headerRows: t.headerRows,
    spans: t.spans,
    ...(t.boxes ? { cellBoxes: t.boxes } : {}),
  };
  const cells = t.cells.map((row) => row.map(withDollarMath));
  return {
    type: 'table',
    box: lb.box,
    markdown: tableToMarkdown(t),
    confidence: meanConfidence(lines),
    lines,
    cells,
    table,
  };
}

/**
 * Display formulas: each its own block, in its place between the runs of text around it (a formula's tall
 * line may have made its block a "heading").
 */
function formulaBlocks(lb: LayoutBlock, lines: readonly LineOut[], push: PushBlock): void {
  let run: LineOut[] = [];
  const flush = (): void => {
    const text = reflow(run.map(lineText));
    const box = unionBox(run.map((l) => l.box));
    if (text && lb.type === 'heading') {
      push({
        type: 'heading',
        level: lb.level ?? 2,
        box,
        markdown: headingMarkdown(text, lb.level ?? 2),
        confidence: meanConfidence(run),
        lines: run,
      });
    } else if (text) {
      push({
        type: 'paragraph',
        box,
        markdown: paragraphMarkdown(text),
        confidence: meanConfidence(run),
        lines: run,
      });
    }
    run = [];
  };
  for (const l of lines) {
    if (l.formula !== 'latex') {
      run.push(l);
      continue;
    }
    flush();
    push({
      type: 'formula',
      box: l.box,
      markdown: formulaMarkdown(l.text, l.number),
      confidence: meanConfidence([l]),
      lines: [l],
      latex: l.text,
      ...(l.number ? { number: l.number } : {}),
    });
  }
  flush();
}

/** A text block as code, a page header or footer (or number), a heading, list items or a paragraph. */
function textBlocks(lb: LayoutBlock, lines: LineOut[], push: PushBlock): void {
  const boxed = lb.boxed ? { boxed: true as const } : {};
  const text = reflow(lines.map(lineText));
  if (!text) return;
  if ((lb.type === 'paragraph' || lb.type === 'heading') && isCode(lines)) {
    push({
      type: 'code',
      box: lb.box,
      markdown: codeMarkdown(codeText(lines)),
      confidence: meanConfidence(lines),
      lines,
      ...boxed,
    });
    return;
  }
  if (lb.type === 'page_header' || lb.type === 'page_footer') {
    const type: BlockType = isPageNumber(text) ? 'page_number' : lb.type;
    push({ type, box: lb.box, markdown: paragraphMarkdown(text), confidence: meanConfidence(lines), lines });
    return;
  }
  // A heading is what the page shows as one; a line nobody could read is not one.
  if (lb.type === 'heading' && !lines.every((l) => l.unreadable)) {
    const level = lb.level ?? 2;
    push({
      type: 'heading',
      level,
      box: lb.box,
      markdown: headingMarkdown(text, level),
      confidence: meanConfidence(lines),
      lines,
      ...boxed,
    });
    return;
  }
  const items = listItems(lines);
  if (items) {
    for (const item of items) {
      const body = reflow(item.map(lineText)).replace(LIST_MARK, '');
      const numbered = /^\s*\(?(\d{1,3})[.)]/.exec(item[0].text);
      push({
        type: 'list_item',
        box: unionBox(item.map((l) => l.box)),
        markdown: listItemMarkdown(body, numbered ? Number(numbered[1]) : undefined),
        confidence: meanConfidence(item),
        lines: item,
        ...boxed,
      });
    }
    return;
  }
  push({
    type: 'paragraph',
    box: lb.box,
    markdown: paragraphMarkdown(text),
    confidence: meanConfidence(lines),
    lines,
    ...boxed,
  });
}

/** The page's markdown: its blocks in reading order, less page headers, footers and numbers where asked. */
function pageMarkdown(blocks: readonly BlockOut[], opts: AssembleOptions): string {
  const shown = blocks.filter(
    (b) =>
      !(opts.dropHeadersFooters && (b.type === 'page_header' || b.type === 'page_footer' || b.type === 'page_number')),
  );
  // List items of one list sit on consecutive lines; every other block is its own paragraph.
  return shown
    .map(
      (b, i) =>
        (i === 0
          ? ''
          : b.type === 'list_item' && shown[i - 1].type === 'list_item' && b.boxed === shown[i - 1].boxed
            ? '\n'
            : '\n\n') + (b.boxed ? quoteMarkdown(b.markdown) : b.markdown),
    )
    .join('');
}

/**
 * `texts` holds, for each layout block, the text of each of its lines (tables: in `block.lines` order, which
 * is the cells' row-major order).
 */
export function assemblePage(
  index: number,
  layout: PageLayout,
  texts: readonly (readonly LineOut[])[],
  opts: AssembleOptions = {},
): PageOut {
  const blocks: BlockOut[] = [];
  const push = (b: Omit<BlockOut, 'order'>): void => {
    blocks.push({ ...b, order: blocks.length });
  };
  layout.blocks.forEach((lb: LayoutBlock, i) => {
    const lines = [...(texts[i] ?? [])];
    if (lb.type === 'figure') {
      push({ type: 'figure', box: lb.box, markdown: '<!-- image -->', confidence: null, lines: [] });
    } else if (lb.type === 'table' && lb.table) {
      push(tableBlock(lb, lb.table, lines));
    } else if ((lb.type === 'paragraph' || lb.type === 'heading') && lines.some((l) => l.formula === 'latex')) {
      formulaBlocks(lb, lines, push);
    } else textBlocks(lb, lines, push);
  });
  const read = takeFormulaNumbers(blocks);
  const markdown = pageMarkdown(read, opts);
  return {
    index,
    width: layout.width,
    height: layout.height,
    rotation: layout.rotation ?? 0,
    blocks: read,
    markdown,
  };
}
