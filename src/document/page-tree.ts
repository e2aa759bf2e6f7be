/** The page tree a read produces: pages, their blocks, and the blocks' lines with their words and formulas. */
import type { Box } from './layout/ink.js';
import type { BlockType } from './layout/analyze.js';
import type { TableSpan } from './layout/table-grid.js';
import type { ScriptShare } from './page-language.js';
import type { WordOut } from './word-boxes.js';

/** Where a formula read within a line sits in its `text` (as `$latex$`, from `start` to `end`), with its box. */
export interface InlineFormulaOut {
  start: number;
  end: number;
  latex: string;
  box: Box;
  confidence: number;
}

/** Why a line's reading is not trusted (worker/reading-trust.ts). */
export type Distrust = 'low-confidence' | 'readers-disagree' | 'repeats';

/** Something the caller should know about a page's reading beyond its text. */
export interface PageWarning {
  kind: 'UNREADABLE_LINES' | 'LITTLE_TEXT' | 'UNREAD_SCRIPT';
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
  /** A display formula's number (`3` for a `(3)` set at the line's end), kept apart from its LaTeX. */
  number?: string;
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
  table?: {
    rows: number;
    columns: number;
    headerRows: number;
    spans: TableSpan[];
    /** Each cell's ink on the page (its lines' boxes together), by grid position; null where it holds no text. */
    cellBoxes?: (Box | null)[][];
  };
  /** Formulas: the LaTeX. */
  latex?: string;
  /** Formulas: the number printed beside it (`3` for `(3)`), where it has one. */
  number?: string;
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
  /** The scripts of the page's letters, largest share first (document/page-language.ts). */
  scripts?: ScriptShare[];
  /** The page's language as ISO 639-3 (`pol`, `rus`, `ell`), where enough text was read to tell; else null. */
  language?: string | null;
}
