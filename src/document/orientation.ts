/**
 * Pages turned a quarter or half round (phone photos, scanner batches). Which axis the lines run along is read
 * from the ink alone: a page's text lines leave empty rows between them, while along a line word gaps fall at
 * different places from line to line, so few columns are empty. Which way up the page is, the model decides
 * (read-document.ts asks the CTC head about a few lines both ways up), since blank rows look the same either way.
 */
import { throughSharp } from './sharp.js';
import type { GrayPage } from './decode-image.js';
import { columnInk, inkOf } from './layout/ink.js';
import { rowProfile } from './layout/lines.js';

export type Turn = 0 | 90 | 180 | 270;

/** A row or column holding less than this share of the busiest one's ink counts as empty. */
const EMPTY = 0.02;

/** Share of the empty positions in a profile, between its first and last inked one. */
function emptyShare(profile: Int32Array): number {
  let first = 0;
  while (first < profile.length && profile[first] === 0) first++;
  let last = profile.length - 1;
  while (last > first && profile[last] === 0) last--;
  let busiest = 0;
  for (let i = first; i <= last; i++) busiest = Math.max(busiest, profile[i]);
  let empty = 0;
  for (let i = first; i <= last; i++) if (profile[i] < EMPTY * busiest) empty++;
  return empty / Math.max(1, last - first + 1);
}

/** Whether the page's lines run down it (the page lies on its side) rather than across. */
export function linesRunDown(page: GrayPage): boolean {
  const ink = inkOf(page);
  const whole = { x: 0, y: 0, width: page.width, height: page.height };
  return emptyShare(columnInk(ink, whole)) > emptyShare(rowProfile(ink, whole));
}

/** The page turned clockwise by `turn` degrees. */
export async function turnPage(page: GrayPage, turn: Turn): Promise<GrayPage> {
  if (turn === 0) return page;
  if (turn === 180) return { width: page.width, height: page.height, data: page.data.slice().reverse() };
  return throughSharp(page, (img) => img.rotate(turn));
}
