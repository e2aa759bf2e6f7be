/**
 * A born-digital PDF's own text as evidence for its lines. Each line is offered the layer's characters drawn on its
 * band; the engine scores them against the CTC frames the line was read from (engine/ctc/score.ts). The layer's text
 * stands in for the reading only where the page's layer agrees with what the model read on most lines, and the
 * frames take it at least as well as the reading on this line. A layer that lies (words that are not drawn, text
 * under a picture, a scanner's bad OCR layer) fits the frames far worse and never passes. The layer is also the
 * reference drafter's text where a request drafts from one and sent none (withReference).
 */
import { distance } from 'fastest-levenshtein';
import type { Box } from '../document/layout/ink.js';
import type { DocumentSource, LayerChar } from '../document/source.js';
import type { CharOut, WordOut } from '../document/word-boxes.js';
import type { EvidenceFit } from '../engine/ctc/score.js';
import { MAX_REFERENCE_CHARS, type UncheckedDecoding } from '../engine/strategies/options.js';
import { drafterSpec } from '../engine/strategies/registry.js';

/** Natural-log units the layer's text may fit the frames worse than the reading (about one character in doubt). */
const SLACK = 1;
/** A page's layer agrees when this share of its lines with layer text read within AGREE of it. */
const AGREEING = 0.6;
const AGREE = 0.25;

/** The layer's characters on a band: centres inside it, left to right, a drawn twice (fake bold) once. */
function charsOn(chars: readonly LayerChar[], band: Box): LayerChar[] {
  const on = chars
    .filter((c) => {
      const cx = c.x + c.width / 2;
      const cy = c.y + c.height / 2;
      // Half a line's height of slack either side: a character's box is its advance, wider than its ink.
      const slack = 0.5 * band.height;
      return cy >= band.y && cy < band.y + band.height && cx >= band.x - slack && cx < band.x + band.width + slack;
    })
    .sort((a, b) => a.x - b.x);
  return on.filter((c, i) => !(i && c.c === on[i - 1].c && Math.abs(c.x - on[i - 1].x) < 0.3 * Math.max(1, c.width)));
}

/** Words of the layer on a band: runs of characters parted by a space or a gap wider than a fifth of the band. */
function wordsOn(chars: readonly LayerChar[], band: Box): LayerChar[][] {
  const words: LayerChar[][] = [];
  let word: LayerChar[] = [];
  let right = -Infinity;
  for (const c of charsOn(chars, band)) {
    const gap = c.x - right > 0.2 * band.height;
    if (!c.c.trim() || gap) {
      if (word.length) words.push(word);
      word = [];
    }
    if (c.c.trim()) word.push(c);
    right = Math.max(right, c.x + c.width);
  }
  if (word.length) words.push(word);
  return words;
}

/** The layer's text on a line's band (NFKC, so ligatures are letters), or undefined where it has none. */
export function layerText(chars: readonly LayerChar[], band: Box): string | undefined {
  const text = wordsOn(chars, band)
    .map((w) => w.map((c) => c.c).join(''))
    .join(' ')
    .normalize('NFKC')
    .trim();
  return text || undefined;
}

/** The layer's words on a band as word boxes (for a line whose text the layer gave). */
export function layerWords(chars: readonly LayerChar[], band: Box, confidence: number, withChars: boolean): WordOut[] {
  const box = (cs: readonly LayerChar[]): Box => {
    const x = Math.min(...cs.map((c) => c.x));
    const y = Math.min(...cs.map((c) => c.y));
    const right = Math.max(...cs.map((c) => c.x + c.width));
    const bottom = Math.max(...cs.map((c) => c.y + c.height));
    return { x: Math.round(x), y: Math.round(y), width: Math.round(right - x), height: Math.round(bottom - y) };
  };
  return wordsOn(chars, band).map((w) => {
    const chars: CharOut[] = w.map((c) => ({ text: c.c, box: box([c]), confidence }));
    const text = w
      .map((c) => c.c)
      .join('')
      .normalize('NFKC');
    return { text, box: box(w), confidence, ...(withChars ? { chars } : {}) };
  });
}

const fold = (s: string): string => s.normalize('NFKC').replace(/\s+/g, ' ').trim();

/** Whether the page's layer says what the model read, on most of the lines it covers. */
export function layerAgrees(lines: readonly { reading: string; layer: string | undefined }[]): boolean {
  const covered = lines.filter((l): l is { reading: string; layer: string } => l.layer !== undefined);
  if (covered.length < 2) return false;
  const close = covered.filter((l) => {
    const [a, b] = [fold(l.reading), fold(l.layer)];
    return distance(a, b) <= AGREE * Math.max(a.length, b.length, 1);
  }).length;
  return close >= AGREEING * covered.length;
}

/** Whether the line's layer text should stand for its reading: it differs, and the frames take it as well. */
export function layerWins(reading: string, layer: string | undefined, fit: EvidenceFit | undefined): layer is string {
  if (layer === undefined || fit === undefined) return false;
  return fold(layer) !== fold(reading) && fit.evidence >= fit.reading - SLACK;
}

/** The decoding asked for, with the PDF's text layer as its reference where its drafter wants one and none was sent. */
export function withReference(
  input: UncheckedDecoding | undefined,
  source: DocumentSource,
): UncheckedDecoding | undefined {
  // not yet checked: the engine checks it
  const asked = input as { drafter?: unknown; reference?: unknown } | undefined;
  if (typeof asked?.drafter !== 'string' || !drafterSpec(asked.drafter)?.needsReference || asked.reference)
    return input;
  // Cut to what a request may send: a huge text layer only drafts, it must not fail the job's options.
  const layer = source.pages
    .map((i) => source.textLayer(i) ?? '')
    .join('\n')
    .trim()
    .slice(0, MAX_REFERENCE_CHARS);
  return layer ? { ...input, reference: layer } : input;
}
