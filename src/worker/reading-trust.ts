/**
 * Whether a reading can be trusted. A line's, from what the reading itself shows: the model's own confidence, its two
 * readers (the CTC head and the decoder) agreeing, and no loop of repeated characters. A reading that fails is
 * kept in the JSON, marked unreadable, and stands in the markdown as UNREADABLE_MARK: a visible gap rather than
 * confident garbage (a box and an icon read as `# ({) utritaterisagis...`, a warped line as `ce ce ce ce`).
 */
import { distance } from 'fastest-levenshtein';
import { type Distrust, type PageWarning, UNREADABLE_MARK } from '../document/assemble.js';

/** Under even odds per token, on average: the model is guessing. */
const GUESSING = 0.5;
/** Under this, a second sign (the readers disagreeing, a loop) is enough to distrust the line. */
const UNSURE = 0.8;
/** The CTC head's reading and the decoder's differ in more than half their characters. */
const DISAGREE = 0.5;
/** A unit of one to four characters repeated this many times running (`ce ce ce ce ce `, `==========`). */
const LOOP = /(.{1,4}?)\1{5,}/u;

export interface Reading {
  text: string;
  confidence: number;
  ctcText: string;
}

/** Edit distance over the longer length: 0 the same, 1 nothing in common. */
function disagreement(a: string, b: string): number {
  const n = Math.max(a.length, b.length);
  return n ? distance(a, b) / n : 0;
}

/** Why the reading is not to be trusted, or null when it is. */
export function distrust(r: Reading): Distrust | null {
  if (!r.text.trim()) return null;
  if (r.confidence < GUESSING) return 'low-confidence';
  if (r.confidence >= UNSURE) return null;
  if (disagreement(r.text.trim(), r.ctcText.trim()) > DISAGREE) return 'readers-disagree';
  // Leaders of dots or dashes (a table of contents) are read with confidence; a loop read unsure is a stuck decoder.
  if (LOOP.test(r.text)) return 'repeats';
  return null;
}

/** A Latin character is about half as wide as its line is tall; a page reads far under that when reading failed. */
const CHAR_PER_LINE_HEIGHT = 0.5;
/** Read characters under this share of what the lines' widths hold: the page said little of what it shows. */
const LITTLE = 0.3;
/** Pages whose lines hold fewer characters than this are not judged (a label, a heading alone). */
const JUDGED = 200;

/** What a page's reading tells its caller beyond its text: lines it could not read, a page that read far too little. */
export function pageWarnings(
  lines: readonly { box: { width: number }; text: string; unreadable?: boolean }[],
  lineHeight: number,
): PageWarning[] {
  const warnings: PageWarning[] = [];
  const unreadable = lines.filter((l) => l.unreadable).length;
  if (unreadable)
    warnings.push({
      kind: 'UNREADABLE_LINES',
      message:
        `${unreadable} of ${lines.length} lines could not be read with ` +
        `confidence; each stands in the markdown as ${UNREADABLE_MARK}`,
    });
  const holds = lines.reduce((s, l) => s + l.box.width / (CHAR_PER_LINE_HEIGHT * Math.max(1, lineHeight)), 0);
  const read = lines.reduce((s, l) => s + (l.unreadable ? 0 : l.text.replace(/\s+/g, '').length), 0);
  if (holds >= JUDGED && read < LITTLE * holds) {
    warnings.push({
      kind: 'LITTLE_TEXT',
      message:
        `read ${read} characters where the page's ${lines.length} text lines ` +
        `hold about ${Math.round(holds)}: most of the page could not be read`,
    });
  }
  return warnings;
}
