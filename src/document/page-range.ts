/** Page ranges as users write them: "0,2-4" (0-based, inclusive, any order, duplicates folded). */
import { DocumentError } from './errors.js';

/** Sorted distinct page indices, checked against the document's page count. */
export function parsePageRange(spec: string, pageCount: number, file: string): number[] {
  const out = new Set<number>();
  for (const part of spec.split(',').map((p) => p.trim())) {
    const m = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part);
    if (!m)
      throw new DocumentError(
        'INVALID_PAGE_RANGE',
        file,
        `page range "${spec}" is not of the form "0,2-4" (0-based page numbers)`,
      );
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) throw new DocumentError('INVALID_PAGE_RANGE', file, `page range "${part}" runs backwards`);
    if (b >= pageCount) {
      throw new DocumentError(
        'PAGE_OUT_OF_RANGE',
        file,
        `page ${b} does not exist: the document has ${pageCount} ` +
          `page${pageCount === 1 ? '' : 's'} (0-${pageCount - 1})`,
      );
    }
    for (let i = a; i <= b; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}
