/**
 * Tesseract's TSV: one row per page, block, paragraph, line and word (levels 1-5) with its numbers, its box
 * (left, top, width, height in pixels) and conf (-1 above the word level; a word's 0-100), so scripts written for
 * `tesseract ... tsv` read ours. A figure is a block without paragraphs, as tesseract writes an image block.
 */
import type { PageOut } from '../assemble.js';
import type { Box } from '../layout/ink.js';
import { blockBox, lineBox, wordsOf } from './words-of.js';

const HEADER = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';

// A tab or newline inside a word would break the row; tesseract's words never hold one.
const cell = (s: string): string => s.replace(/[\t\r\n]/g, ' ');

export function toTsv(pages: readonly PageOut[]): string {
  const rows = [HEADER];
  const row = (level: number, nums: number[], b: Box, conf: number, text: string): void => {
    rows.push([level, ...nums, b.x, b.y, b.width, b.height, conf, cell(text)].join('\t'));
  };
  for (const pg of pages) {
    const p = pg.index + 1;
    row(1, [p, 0, 0, 0, 0], { x: 0, y: 0, width: pg.width, height: pg.height }, -1, '');
    let blockNum = 0;
    for (const b of pg.blocks) {
      const lines = b.lines.filter((l) => l.text.trim());
      if (b.type !== 'figure' && !lines.length) continue;
      blockNum++;
      if (!lines.length) {
        row(2, [p, blockNum, 0, 0, 0], b.box, -1, '');
        continue;
      }
      const box = blockBox(b);
      row(2, [p, blockNum, 0, 0, 0], box, -1, '');
      row(3, [p, blockNum, 1, 0, 0], box, -1, '');
      lines.forEach((l, j) => {
        row(4, [p, blockNum, 1, j + 1, 0], lineBox(l), -1, '');
        wordsOf(l).forEach((w, k) =>
          row(5, [p, blockNum, 1, j + 1, k + 1], w.box, Math.round(10000 * w.confidence) / 100, w.text),
        );
      });
    }
  }
  return rows.join('\n') + '\n';
}
