/**
 * Whether a line is set in a fixed-width font, from where its characters were read: in a monospace line the n-th
 * character (spaces counted) stands n pitches from the first, so their centres fall on one straight line. Prose
 * in a proportional font strays from any such line by a third of a character or more; code stays within a tenth.
 */
import type { Glyph } from '../engine/ctc/align.js';

/** Root-mean-square stray from the fitted pitch, in pitches, under which the line is monospace. */
const EVEN = 0.1;
/** Fewer characters than this say nothing either way. */
const MIN_CHARS = 8;

export function isMonospace(glyphs: readonly Glyph[]): boolean {
  const at: number[] = [];
  const xs: number[] = [];
  let pos = 0;
  for (const g of glyphs) {
    if (g.char.trim()) {
      at.push(pos);
      xs.push((g.x0 + g.x1) / 2);
    }
    pos += g.char.length;
  }
  const n = at.length;
  if (n < MIN_CHARS) return false;
  const ma = at.reduce((s, v) => s + v, 0) / n;
  const mx = xs.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (at[i] - ma) * (xs[i] - mx);
    sxx += (at[i] - ma) ** 2;
  }
  const pitch = sxy / sxx;
  if (!(pitch > 0)) return false;
  let sq = 0;
  for (let i = 0; i < n; i++) sq += (xs[i] - (mx + pitch * (at[i] - ma))) ** 2;
  return Math.sqrt(sq / n) / pitch < EVEN;
}

/** The pitch (columns per character) of a monospace line's glyphs: its width over its characters. */
export function pitchOf(glyphs: readonly Glyph[]): number {
  const ink = glyphs.filter((g) => g.char.trim());
  if (ink.length < 2) return 0;
  let chars = 0;
  let seen = false;
  for (const g of glyphs) {
    if (g === ink[ink.length - 1]) break;
    if (g === ink[0]) seen = true;
    if (seen) chars += g.char.length;
  }
  const span = (ink[ink.length - 1].x0 + ink[ink.length - 1].x1) / 2 - (ink[0].x0 + ink[0].x1) / 2;
  return chars ? span / chars : 0;
}
