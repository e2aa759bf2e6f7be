/**
 * Which scripts and language a page's reading is in. Scripts are counted from the letters read (Unicode's script
 * property), with the script of lines the model could not read (the script gate's name for them) beside; the language
 * is franc's trigram guess among the languages the model's letters spell, given enough text to tell.
 */
import { franc } from 'franc';
import { scriptOf } from '../engine/decode/mixed-scripts.js';

/** ISO 639-3 codes of the languages whose alphabets the line model reads (training/european.py and Latin-1's own). */
export const READ_LANGUAGES = (
  'eng fra deu spa ita por nld dan swe nob fin cat ' +
  'pol ces slk hun ron tur hrv slv lav lit ell rus ukr bel bul srp mkd'
).split(' ');

/** Letters a guess needs: on a few words franc's trigrams mistake one language for a neighbour. */
const MIN_LETTERS = 80;

export interface ScriptShare {
  /** Unicode's name for the script (Latin, Greek, Cyrillic), or the script gate's for lines it did not read. */
  script: string;
  /** Its share of the page's letters (lines not read count by their length). */
  share: number;
}

/** The page's scripts, largest share first, and its language (null where it cannot be told). */
export function pageLanguage(
  lines: readonly { text: string; unread?: boolean }[],
  unreadScript: string | null,
): { scripts: ScriptShare[]; language: string | null } {
  const counts = new Map<string, number>();
  let read = '';
  for (const line of lines) {
    if (line.unread) {
      const name = unreadScript ?? 'unknown';
      counts.set(name, (counts.get(name) ?? 0) + line.text.replace(/\s/g, '').length);
      continue;
    }
    read += `${line.text}\n`;
    for (const ch of line.text) {
      const script = scriptOf(ch);
      if (script) counts.set(script, (counts.get(script) ?? 0) + 1);
    }
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const scripts = [...counts]
    .map(([script, n]) => ({ script: scriptName(script), share: Math.round((n / total) * 1000) / 1000 }))
    .sort((a, b) => b.share - a.share);
  const letters = (read.match(/\p{L}/gu) ?? []).length;
  const guess = letters >= MIN_LETTERS ? franc(read, { only: READ_LANGUAGES, minLength: MIN_LETTERS }) : 'und';
  return { scripts, language: guess === 'und' ? null : guess };
}

/** A script as pages name it: the gate's class names are lower-case ("cyrillic"), Unicode's capitalised. */
export function scriptName(script: string): string {
  return script.charAt(0).toUpperCase() + script.slice(1);
}
