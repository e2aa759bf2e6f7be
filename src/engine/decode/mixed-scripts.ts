/**
 * One script per word. Latin, Greek and Cyrillic share letters that print alike (Unicode's confusables, UTS #39),
 * so the image alone cannot tell Cyrillic "е" from Latin "e", and a model that reads all three scripts sometimes
 * writes a word in two. Real text does not mix scripts inside a word, so such a word is rewritten in one script:
 * the one its unambiguous letters clearly belong to, else the one its line's belong to. Only look-alike
 * letters are replaced, one for one, so a text keeps its length and its glyphs their places.
 */
import type { Glyph } from '../ctc/align.js';

type Script = 'Latin' | 'Greek' | 'Cyrillic';
const SCRIPTS: readonly Script[] = ['Latin', 'Greek', 'Cyrillic'];

/** Letters that print alike, one group per shape: Latin, Greek, Cyrillic ('' where a script has none). */
const LOOK_ALIKES: readonly (readonly [string, string, string])[] = [
  ['A', 'Α', 'А'],
  ['B', 'Β', 'В'],
  ['C', '', 'С'],
  ['E', 'Ε', 'Е'],
  ['H', 'Η', 'Н'],
  ['I', 'Ι', 'І'],
  ['J', '', 'Ј'],
  ['K', 'Κ', 'К'],
  ['M', 'Μ', 'М'],
  ['N', 'Ν', ''],
  ['O', 'Ο', 'О'],
  ['P', 'Ρ', 'Р'],
  ['S', '', 'Ѕ'],
  ['T', 'Τ', 'Т'],
  ['X', 'Χ', 'Х'],
  ['Y', 'Υ', ''],
  ['Z', 'Ζ', ''],
  ['Ë', '', 'Ё'],
  ['Ï', 'Ϊ', 'Ї'],
  ['a', '', 'а'],
  ['c', '', 'с'],
  ['e', '', 'е'],
  ['i', '', 'і'],
  ['j', '', 'ј'],
  ['o', 'ο', 'о'],
  ['p', '', 'р'],
  ['s', '', 'ѕ'],
  ['x', '', 'х'],
  ['y', '', 'у'],
  ['ë', '', 'ё'],
  ['ï', '', 'ї'],
];

/** Each look-alike letter's group. */
const GROUP = new Map<string, readonly [string, string, string]>(
  LOOK_ALIKES.flatMap((g) => g.filter((ch) => ch !== '').map((ch) => [ch, g] as const)),
);

const PATTERNS = SCRIPTS.map((s) => [s, new RegExp(`^\\p{Script=${s}}$`, 'u')] as const);
const WORD = /[\p{L}\p{M}]+/gu;

function scriptOf(ch: string): Script | null {
  return PATTERNS.find(([, re]) => re.test(ch))?.[0] ?? null;
}

/** Letters per script in `text`: all of them, and those with no look-alike in another script. */
function tally(text: string): { all: Map<Script, number>; telling: Map<Script, number> } {
  const all = new Map<Script, number>();
  const telling = new Map<Script, number>();
  for (const ch of text) {
    const s = scriptOf(ch);
    if (!s) continue;
    all.set(s, (all.get(s) ?? 0) + 1);
    if (!GROUP.has(ch)) telling.set(s, (telling.get(s) ?? 0) + 1);
  }
  return { all, telling };
}

/** The script with the most letters in `counts`, where it leads the next by `margin` or more; else null. */
function leader(counts: Map<Script, number>, margin = 1): Script | null {
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  if (ranked.length === 0) return null;
  return ranked[0][1] - (ranked[1]?.[1] ?? 0) >= margin ? ranked[0][0] : null;
}

/** `text` with each word that mixes Latin, Greek and Cyrillic letters rewritten in one of them where it can be. */
export function oneScriptPerWord(text: string): string {
  let line: ReturnType<typeof tally> | undefined;
  return text.replace(WORD, (word) => {
    const own = tally(word);
    if (own.all.size < 2) return word;
    line ??= tally(text);
    // One unambiguous letter may itself be the misreading (Λ for W in a Latin line): then the line decides.
    const target = leader(own.telling, 2) ?? leader(line.telling) ?? leader(line.all);
    if (!target) return word;
    const at = SCRIPTS.indexOf(target);
    return Array.from(word, (ch) => {
      const twin = GROUP.get(ch)?.[at];
      return twin && scriptOf(ch) !== target ? twin : ch;
    }).join('');
  });
}

/** A reading's glyphs as oneScriptPerWord rewrites their text: one character each, so each keeps its place. */
export function oneScriptGlyphs(glyphs: readonly Glyph[]): Glyph[] {
  const chars = Array.from(oneScriptPerWord(glyphs.map((g) => g.char).join('')));
  return glyphs.map((g, k) => (chars[k] === g.char ? g : { ...g, char: chars[k] }));
}

/** A reading with its text, and its glyphs where it has them, in one script per word. */
export function oneScriptReading<T extends { text: string; glyphs?: Glyph[] }>(reading: T): T {
  const text = oneScriptPerWord(reading.text);
  if (text === reading.text) return reading;
  return { ...reading, text, ...(reading.glyphs ? { glyphs: oneScriptGlyphs(reading.glyphs) } : {}) };
}
