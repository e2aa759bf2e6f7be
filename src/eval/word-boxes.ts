/**
 * Word boxes scored against a page's ground-truth words: the share of truth words matched, one to one, by a
 * predicted word with the same text (NFKC) and a box overlapping it at IoU >= 0.5. DocBank gives its words in
 * 0-1000 page coordinates; tesseract's TSV and ours are in pixels.
 */
import { readFileSync } from 'node:fs';
import type { Box } from '../document/layout/ink.js';

export interface ScoredWord {
  text: string;
  box: Box;
}

export function iou(a: Box, b: Box): number {
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.width, b.x + b.width);
  const y1 = Math.min(a.y + a.height, b.y + b.height);
  const inter = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}

const norm = (s: string): string => s.normalize('NFKC');

/** DocBank's tokens.tsv (token, x0, y0, x1, y1 in 0-1000, ...) as pixel boxes of a page `width` x `height`. */
export function docbankWords(path: string, width: number, height: number): ScoredWord[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [text, x0, y0, x1, y1] = l.split('\t');
      const [a, b, c, d] = [x0, y0, x1, y1].map(Number);
      return {
        text,
        box: {
          x: (a * width) / 1000,
          y: (b * height) / 1000,
          width: ((c - a) * width) / 1000,
          height: ((d - b) * height) / 1000,
        },
      };
    });
}

/** Tesseract's TSV output: its level-5 rows (words). */
export function tesseractTsvWords(tsv: string): ScoredWord[] {
  return tsv
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((c) => c[0] === '5' && c[11]?.trim())
    .map((c) => ({
      text: c[11],
      box: { x: Number(c[6]), y: Number(c[7]), width: Number(c[8]), height: Number(c[9]) },
    }));
}

export interface WordBoxScore {
  truth: number;
  predicted: number;
  /** Truth words matched by same text and IoU >= 0.5. */
  matched: number;
  /** Truth words with a same-text prediction at all (the text's share of the misses, apart from the boxes'). */
  sameText: number;
  /** Median IoU over the matched words' best same-text predictions. */
  medianIou: number;
}

export function scoreWordBoxes(truth: readonly ScoredWord[], predicted: readonly ScoredWord[]): WordBoxScore {
  const byText = new Map<string, number[]>();
  predicted.forEach((p, i) => {
    const k = norm(p.text);
    byText.set(k, [...(byText.get(k) ?? []), i]);
  });
  const used = new Set<number>();
  let matched = 0;
  let sameText = 0;
  const ious: number[] = [];
  for (const t of truth) {
    const cands = byText.get(norm(t.text)) ?? [];
    if (!cands.length) continue;
    sameText++;
    let best = -1;
    let bestIou = 0;
    for (const i of cands) {
      if (used.has(i)) continue;
      const v = iou(t.box, predicted[i].box);
      if (v > bestIou) {
        bestIou = v;
        best = i;
      }
    }
    ious.push(bestIou);
    if (best >= 0 && bestIou >= 0.5) {
      matched++;
      used.add(best);
    }
  }
  ious.sort((a, b) => a - b);
  return {
    truth: truth.length,
    predicted: predicted.length,
    matched,
    sameText,
    medianIou: ious.length ? ious[ious.length >> 1] : 0,
  };
}

/** The pages' scores together; `medianIou` is the median of the pages' own medians. */
export function sumScores(scores: readonly WordBoxScore[]): WordBoxScore & { share: number } {
  const s = scores.reduce(
    (a, b) => ({
      truth: a.truth + b.truth,
      predicted: a.predicted + b.predicted,
      matched: a.matched + b.matched,
      sameText: a.sameText + b.sameText,
      medianIou: 0,
    }),
    { truth: 0, predicted: 0, matched: 0, sameText: 0, medianIou: 0 },
  );
  const ious = scores.map((x) => x.medianIou).sort((a, b) => a - b);
  return { ...s, medianIou: ious[ious.length >> 1] ?? 0, share: s.truth ? s.matched / s.truth : 0 };
}
