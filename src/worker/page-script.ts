/**
 * Whether a page is in a script the model never learnt, and which, from the script gate's verdicts
 * (engine/ctc/script-gate.ts) on the lines its orientation check already read. The gate errs on single lines; a page
 * is judged only on several lines that agree, and only then are its lines each read by the CTC head where the gate
 * flags them (ReadOptions.unreadScripts).
 */
import { scriptName } from '../document/page-language.js';
import type { PageWarning } from '../document/page-tree.js';
import { UNNAMED } from '../engine/ctc/script-gate.js';

/** Lines the gate could judge that a page needs ... */
const MIN_JUDGED = 3;
/** ... and the share of them that must be flagged. */
const SHARE = 2 / 3;

/** The script the page is in where it is one the model lacks (the name most flagged lines got), else null. */
export function unreadScriptOf(verdicts: readonly { unread: number; script: string | null }[]): string | null {
  const judged = verdicts.filter((s) => s.unread > -Infinity);
  if (judged.length < MIN_JUDGED) return null;
  const flagged = judged.filter((s) => s.unread > 0);
  if (flagged.length < SHARE * judged.length) return null;
  const votes = new Map<string, number>();
  for (const f of flagged) {
    const script = f.script ?? UNNAMED;
    votes.set(script, (votes.get(script) ?? 0) + 1);
  }
  return [...votes].sort((a, b) => b[1] - a[1])[0][0];
}

/** The warning a page in a script the model does not read gets: none where `script` is null. */
export function unreadScriptWarning(script: string | null): PageWarning[] {
  if (script === null) return [];
  const which = script === UNNAMED ? 'a script' : `${scriptName(script)},`;
  return [{ kind: 'UNREAD_SCRIPT', message: `the page is in ${which} which the model does not read` }];
}
