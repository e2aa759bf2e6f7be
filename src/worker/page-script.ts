/**
 * Whether a page is in a script the model never learnt, from the script gate's scores (engine/ctc/script-gate.ts) of
 * the lines its orientation check already read. The gate errs on single lines (6.6% of held-out synthetic Latin lines,
 * 10.5% of receipt lines flagged); a page is judged only on several lines that agree, and only then are its lines
 * each read by the CTC head where the gate flags them (ReadOptions.unreadScripts).
 */

/** Lines the gate could judge that a page needs ... */
const MIN_JUDGED = 3;
/** ... and the share of them that must be flagged. */
const SHARE = 2 / 3;

export function inUnreadScript(scores: readonly { unread: number }[]): boolean {
  const judged = scores.filter((s) => s.unread > -Infinity);
  if (judged.length < MIN_JUDGED) return false;
  return judged.filter((s) => s.unread > 0).length >= SHARE * judged.length;
}
