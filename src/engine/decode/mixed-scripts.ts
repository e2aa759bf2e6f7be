/**
 * One script per word. Latin, Greek and Cyrillic share letters that print alike (Unicode's confusables, UTS #39),
 * so the image alone cannot tell Cyrillic "е" from Latin "e", and a model that reads all three scripts sometimes
 * writes a word in two. Real text does not mix scripts inside a word, so such a word is respelt in one script: the
 * one its unambiguous letters clearly belong to, else the one its line's belong to, and only where each of its
 * letters has a twin there. Letters are replaced one for one, so a text keeps its length and its glyphs their places.
 */
import type { Glyph } from '../ctc/align.js';
import type { Tokenizer } from '../bundle/tokenizer.js';

export type Script = 'Latin' | 'Greek' | 'Cyrillic';
const SCRIPTS: readonly Script[] = ['Latin', 'Greek', 'Cyrillic'];

/**
 * Letters identical in common fonts, one group per shape: Latin, Greek, Cyrillic ('' where a script has none).
 * Pairs that are only similar (ρ and p, ν and v) are left out: there the image can tell them apart.
 */
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
  ['È', '', 'Ѐ'],
  ['Ë', '', 'Ё'],
  ['Ï', 'Ϊ', 'Ї'],
  ['Ÿ', 'Ϋ', ''],
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
  ['è', '', 'ѐ'],
  ['ë', '', 'ё'],
  ['ï', 'ϊ', 'ї'],
  ['ó', 'ό', ''],
  ['ĸ', 'κ', 'к'],
];

/** Each look-alike letter's group. */
const GROUP = new Map<string, readonly [string, string, string]>(
  LOOK_ALIKES.flatMap((g) => g.filter((ch) => ch !== '').map((ch) => [ch, g] as const)),
);

const PATTERNS = SCRIPTS.map((s) => [s, new RegExp(`^\\p{Script=${s}}$`, 'u')] as const);
const WORD = /[\p{L}\p{M}]+/gu;
const NOT_LATIN = /[\p{Script=Greek}\p{Script=Cyrillic}]/u;
/** Roman numerals are Latin letters, whatever the line around them is written in. */
const ROMAN = new Set('IVXLCDM');

/** The script of one character among those the line model reads, or null (digits, punctuation, other scripts). */
export function scriptOf(ch: string): Script | null {
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

/** `word` respelt in `target`, or null where one of its letters has no twin there. */
function respell(word: string, target: Script): string | null {
  const at = SCRIPTS.indexOf(target);
  let out = '';
  for (const ch of word) {
    const s = scriptOf(ch);
    const twin = s === null || s === target ? ch : GROUP.get(ch)?.[at];
    if (!twin) return null;
    out += twin;
  }
  return out;
}

/** One line: each word that mixes scripts respelt in one of them where it can be. */
function oneScriptLine(line: string): string {
  let context: ReturnType<typeof tally> | undefined;
  return line.replace(WORD, (word) => {
    const own = tally(word);
    if (own.all.size < 2) return word;
    const roman = Array.from(word).every((ch) => ROMAN.has(GROUP.get(ch)?.[0] ?? ch));
    context ??= tally(line);
    // One unambiguous letter may itself be the misreading (Λ for W in a Latin line): then the line decides.
    const target = roman ? 'Latin' : (leader(own.telling, 2) ?? leader(context.telling) ?? leader(context.all));
    return (target && respell(word, target)) ?? word;
  });
}

/** `text` with each word that mixes Latin, Greek and Cyrillic letters respelt in one of them; each line on its own. */
export function oneScriptPerWord(text: string): string {
  return NOT_LATIN.test(text) ? text.split('\n').map(oneScriptLine).join('\n') : text;
}

/**
 * A reading's ids with each character's id swapped where `text`, its respelt text, has another letter (look-alikes
 * are one token each); ids that are not characters (a region's line breaks aside) are kept as they are.
 */
export function respeltIds(ids: readonly number[], text: string, tokenizer: Tokenizer): number[] {
  const chars = Array.from(text);
  let k = 0;
  let ended = false;
  return ids.map((id) => {
    ended ||= id === tokenizer.special.eos;
    if (ended) return id;
    if (id === tokenizer.lineBreak) k++;
    if (!tokenizer.isText(id)) return id;
    const ch = chars[k++];
    return ch === undefined || ch === tokenizer.vocab[id] ? id : tokenizer.encode(ch)[0];
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
