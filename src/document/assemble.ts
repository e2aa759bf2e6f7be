/**
 * Layout + the text of every line -> the page as typed blocks (JSON) and as markdown. Paragraph lines are
 * reflowed, with hyphenated line ends joined; lines that start with a bullet or a number become list items;
 * a header or footer that is only a number becomes the page number; tables become markdown tables; figures
 * stay blocks with their box (markdown `<!-- image -->`, as docling writes it). A line read as a formula is a
 * `formula` block of its own (markdown `$$...$$`) where it stood in a paragraph, and inline math (`$...$`) in a
 * table cell or any other block.
 */
import { type Box, unionBox } from './layout/ink.js';
import type { BlockType, LayoutBlock, PageLayout } from './layout/analyze.js';
import type { InlineFormulaOut } from './inline-formulas.js';
import type { WordOut } from './word-boxes.js';
import {
  codeMarkdown,
  formulaMarkdown,
  headingMarkdown,
  inlineFormula,
  listItemMarkdown,
  paragraphMarkdown,
  quoteMarkdown,
  withDollarMath,
} from './markdown.js';
import type { TableSpan } from './layout/table-grid.js';
import { foldCurrencyColumns, tableToMarkdown } from './table-text.js';

export { tableMarkdown } from './markdown.js';

/** Why a line's reading is not trusted (worker/reading-trust.ts). */
export type Distrust = 'low-confidence' | 'readers-disagree' | 'repeats';

/** What an unreadable line shows in the markdown: a visible gap, never the reading it was not sure of. */
export const UNREADABLE_MARK = '⟦unreadable⟧';

/** Something the caller should know about a page's reading beyond its text. */
export interface PageWarning {
  kind: 'UNREADABLE_LINES' | 'LITTLE_TEXT';
  message: string;
}

export interface LineOut {
  box: Box;
  text: string;
  confidence?: number;
  /**
   * Set where the reading is not to be trusted (`distrust` says why): `text` is kept as read, and the markdown
   * shows UNREADABLE_MARK in its place.
   */
  unreadable?: boolean;
  distrust?: Distrust;
  /**
   * Set where the page was found to be in a script the model never learnt and the gate flagged this line: its text
   * is the CTC head's reading, not decoded (engine/ctc/script-gate.ts).
   */
  unread?: boolean;
  /** Asked for (word boxes): the line's words, left to right, with their boxes and confidences. */
  words?: WordOut[];
  /**
   * 'latex': read by the formula reader, `text` is its LaTeX. 'fallback': the formula reader's LaTeX did not close
   * (document/formula.ts), so `text` is the text reader's reading and the confidence is low.
   */
  formula?: 'latex' | 'fallback';
  /** Formulas read within the line (document/inline-formulas.ts): each stands in `text` as `$latex$`. */
  inline?: InlineFormulaOut[];
  /** Set where the line is set in a fixed-width font (monospace.ts): page pixels per character. */
  pitch?: number;
  /**
   * Set where `text` is the PDF's own text layer for the line: the page's layer agrees with the reading, and on
   * this line the model's CTC head found the layer's text fits what it sees at least as well as its own reading.
   */
  textLayer?: boolean;
}

export interface BlockOut {
  type: BlockType;
  box: Box;
  /** Position in reading order on the page. */
  order: number;
  level?: number;
  markdown: string;
  /** Mean confidence of the block's lines, where the engine gave one. */
  confidence: number | null;
  lines: LineOut[];
  /** Tables: cell text by grid position, row by row ('' where a spanning cell covers the position). */
  cells?: string[][];
  /** Tables: the grid's size, its header rows and the cells that span more than one position. */
  table?: { rows: number; columns: number; headerRows: number; spans: TableSpan[] };
  /** Formulas: the LaTeX. */
  latex?: string;
  /** Set between rules as a note or a warning is: its markdown is a block quote. */
  boxed?: true;
}

export interface PageOut {
  index: number;
  width: number;
  height: number;
  blocks: BlockOut[];
  markdown: string;
  /** Clockwise degrees the page was turned to read it upright (0, 90, 180, 270). */
  rotation: number;
  /**
   * Degrees of skew straightened out after that (0 when none). Boxes, width and height are the page's as it came in.
   */
  skew?: number;
  /**
   * A photograph's sheet, found and straightened before it was read (capture.ts): its corners in the page as it came
   * in, top-left, top-right, bottom-right, bottom-left. Boxes are then the smallest holding each in the photograph.
   */
  sheet?: { x: number; y: number }[];
  /** Lines marked unreadable (LineOut.unreadable). */
  unreadableLines?: number;
  warnings?: PageWarning[];
}

export interface AssembleOptions {
  /** Leave page headers, footers and page numbers out of the markdown (they stay in the block tree, flagged). */
  dropHeadersFooters?: boolean;
}

const LIST_MARK = /^\s*(?:[•·▪◦●‣∙*–-]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+/;
// Front-matter page numbers stay small: i..cccxcix (no d or m, so "MD" or "mid" are words, not pages).
const ROMAN = /^(?=[clxvi])c{0,3}(x[cl]|l?x{0,3})(i[xv]|v?i{0,3})$/;
const ARABIC_PAGE = /^\s*(?:page\s+)?\d{1,4}(?:\s*(?:of|\/)\s*\d{1,4})?\s*$/i;

/** "12", "Page 3 of 9", "iv", "XII" (a valid numeral in one case: "Mix" or "Did" are words). */
export function isPageNumber(text: string): boolean {
  const t = text.trim();
  if (ARABIC_PAGE.test(t)) return true;
  return (t === t.toLowerCase() || t === t.toUpperCase()) && ROMAN.test(t.toLowerCase());
}

/** Unreadable lines one after another are one gap in the text, not a row of marks. */
const MARK_RUN = new RegExp(`${UNREADABLE_MARK}(?:\\s+${UNREADABLE_MARK})+`, 'gu');

/** Join a block's lines into running text: a hyphen at a line end before a lower-case letter is a break. */
export function reflow(lines: readonly string[]): string {
  return joinLines(lines).replace(MARK_RUN, UNREADABLE_MARK);
}

function joinLines(lines: readonly string[]): string {
  let out = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (!out) {
      out = line;
    } else if (/[\p{L}]-$/u.test(out) && /^\p{Ll}/u.test(line)) {
      out = out.slice(0, -1) + line;
    } else {
      out += ' ' + line;
    }
  }
  return out;
}

/** Split a text block into list items where its lines start with list markers; null if it is not a list. */
function listItems(lines: readonly LineOut[]): LineOut[][] | null {
  if (!lines.length || !LIST_MARK.test(lines[0].text)) return null;
  const items: LineOut[][] = [];
  for (const l of lines) {
    if (LIST_MARK.test(l.text) || !items.length) items.push([l]);
    else items[items.length - 1].push(l);
  }
  // One marker-looking line in a long paragraph ("1. The ...") is not a list.
  return items.length >= Math.ceil(lines.length / 3) ? items : null;
}

/** A line's text as the block writers take it: a formula's LaTeX marked as inline math. */
const lineText = (l: LineOut): string => {
  if (l.unreadable) return UNREADABLE_MARK;
  if (l.formula === 'latex') return inlineFormula(l.text);
  if (!l.inline?.length) return l.text;
  let out = '';
  let at = 0;
  for (const f of l.inline) {
    out += l.text.slice(at, f.start) + inlineFormula(f.latex);
    at = f.end;
  }
  return out + l.text.slice(at);
};

function meanConfidence(lines: readonly LineOut[]): number | null {
  const c = lines.map((l) => l.confidence).filter((x): x is number => x !== undefined);
  return c.length ? c.reduce((a, b) => a + b, 0) / c.length : null;
}

/** A line says whether it is monospace only with this many characters (monospace.ts). */
const JUDGED_CHARS = 8;

/**
 * A block of code: most of its lines that are long enough to tell are monospace, and not mere figures (tabular
 * digits are fixed-width in most fonts).
 */
function isCode(lines: readonly LineOut[]): boolean {
  const judged = lines.filter((l) => l.text.replace(/\s+/g, '').length >= JUDGED_CHARS);
  const code = judged.filter((l) => l.pitch && !/^[\d\s.,:;%()+\-/]*$/.test(l.text));
  return code.length > 0 && code.length >= 0.6 * judged.length;
}

/** A code block's text: each line as read, indented by its offset from the block's leftmost line, in characters. */
function codeText(lines: readonly LineOut[]): string {
  const pitch =
    lines
      .map((l) => l.pitch ?? 0)
      .filter((p) => p > 0)
      .sort((a, b) => a - b)[0] ?? 0;
  const left = Math.min(...lines.map((l) => l.box.x));
  return lines
    .map(
      (l) =>
        (pitch ? ' '.repeat(Math.max(0, Math.round((l.box.x - left) / pitch))) : '') +
        (l.unreadable ? UNREADABLE_MARK : l.text.trimEnd()),
    )
    .join('\n');
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
    const boxed = lb.boxed ? { boxed: true as const } : {};
    if (lb.type === 'figure') {
      push({ type: 'figure', box: lb.box, markdown: '<!-- image -->', confidence: null, lines: [] });
      return;
    }
    if (lb.type === 'table' && lb.table) {
      let k = 0;
      const read = lb.table.cells.map((row) =>
        row.map((cell) =>
          reflow(
            cell.map(() => {
              const l = lines[k++];
              return l ? lineText(l) : '';
            }),
          ),
        ),
      );
      const t = foldCurrencyColumns({ cells: read, spans: lb.table.spans, headerRows: lb.table.headerRows });
      const table = {
        rows: t.cells.length,
        columns: t.cells[0]?.length ?? 0,
        headerRows: t.headerRows,
        spans: t.spans,
      };
      const cells = t.cells.map((row) => row.map(withDollarMath));
      push({
        type: 'table',
        box: lb.box,
        markdown: tableToMarkdown(t),
        confidence: meanConfidence(lines),
        lines,
        cells,
        table,
      });
      return;
    }
    if ((lb.type === 'paragraph' || lb.type === 'heading') && lines.some((l) => l.formula === 'latex')) {
      // Display formulas: each its own block, in its place between the runs of text around it (a formula's tall
      // line may have made its block a "heading").
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
          markdown: formulaMarkdown(l.text),
          confidence: meanConfidence([l]),
          lines: [l],
          latex: l.text,
        });
      }
      flush();
      return;
    }
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
  });
  const shown = blocks.filter(
    (b) =>
      !(opts.dropHeadersFooters && (b.type === 'page_header' || b.type === 'page_footer' || b.type === 'page_number')),
  );
  // List items of one list sit on consecutive lines; every other block is its own paragraph.
  const markdown = shown
    .map(
      (b, i) =>
        (i === 0
          ? ''
          : b.type === 'list_item' && shown[i - 1].type === 'list_item' && b.boxed === shown[i - 1].boxed
            ? '\n'
            : '\n\n') + (b.boxed ? quoteMarkdown(b.markdown) : b.markdown),
    )
    .join('');
  return { index, width: layout.width, height: layout.height, rotation: layout.rotation ?? 0, blocks, markdown };
}
