/**
 * How readBlocks reads a page with a region bundle: its blocks cut into runs read as regions, and each run's
 * streamed tokens and reading spread back over the run's lines.
 */
import type { Tokenizer } from './bundle/tokenizer.js';
import type { Glyph } from './ctc/align.js';
import type { LineReading } from './engine-types.js';
import type { GrayCrop } from './vision/preprocess.js';

/** A run of a block's lines read as one region: where its first line falls among the page's lines, and its crops. */
export interface RegionRun {
  first: number;
  crops: readonly GrayCrop[];
}

/** Each block cut into runs of up to `maxLines` lines; `count`: the page's lines in all. */
export function regionRuns(
  blocks: readonly (readonly GrayCrop[])[],
  maxLines: number,
  maxWidth: number,
): { runs: RegionRun[]; count: number } {
  const runs: RegionRun[] = [];
  let first = 0;
  for (const b of blocks) {
    // A block with a line wider than one vision pass is read line by line, that line in pieces.
    const step = b.some((c) => c.width > maxWidth) ? 1 : maxLines;
    for (let i = 0; i < b.length; i += step) runs.push({ first: first + i, crops: b.slice(i, i + step) });
    first += b.length;
  }
  return { runs, count: first };
}

/** Run `k`'s streamed tokens, handed on as its lines' (by their index among the page's lines). */
export function runTokens(
  runs: readonly RegionRun[],
  onTokens: (index: number, text: string, fromDraft: readonly boolean[], drafted: number) => void,
): (k: number, text: string, fromDraft: readonly boolean[], drafted: number) => void {
  // A region's tokens go to its lines in turn: a line break moves on to the next line.
  const seen = runs.map(() => 0);
  return (k, text, fromDraft, drafted) => {
    let at = 0;
    for (const part of text.split('\n')) {
      if (part)
        onTokens(
          runs[k].first + Math.min(seen[k], runs[k].crops.length - 1),
          part,
          fromDraft.slice(at, at + part.length),
          drafted,
        );
      at += part.length + 1;
      seen[k]++;
    }
    seen[k]--;
  };
}

/**
 * Each run's reading split into its lines' readings, set in `lines`; returns the runs whose reading has another
 * number of lines than the run has crops (two lines merged, one split), left for reading again line by line.
 */
export function spreadRuns(
  read: { lines: readonly LineReading[]; glyphs: readonly (Glyph[][] | undefined)[] },
  runs: readonly RegionRun[],
  tokenizer: Tokenizer,
  lines: LineReading[],
): number[] {
  const redo: number[] = [];
  read.lines.forEach((r, k) => {
    const texts = r.text.split('\n');
    if (texts.length !== runs[k].crops.length) {
      redo.push(k);
      return;
    }
    texts.forEach((text, j) => {
      const glyphs = read.glyphs[k]?.[j];
      lines[runs[k].first + j] = {
        text,
        ids: tokenizer.encode(text),
        confidence: r.confidence,
        ctcText: r.ctcText.split('\n')[j] ?? '',
        ...(glyphs ? { glyphs } : {}),
      };
    });
  });
  return redo;
}
