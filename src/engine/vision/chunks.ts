/**
 * How many lines one run of the vision graph reads at once. onnxruntime's arena keeps the largest activations a
 * session has seen until the process ends, and they grow with a run's lines times their padded width, about 14 KB a
 * padded column for the line bundle's int8 graph on one thread (6 lines of 1,100 px: 77 MB; 3 of them: 53 MB; 2: 33
 * MB), at the same time per column (22 us) whatever the run's size.
 */

/** Most lines in one chunk. */
export const VISION_CHUNK = 8;

/**
 * Most padded pixel columns in one chunk (a line wider than this goes alone: the bundle's widest line is 1,600 px).
 * `specula parse` over six docbank pages peaked at 417-460 MB (median 430) with 1,600 against 436-465 (448) with
 * 3,200 (six runs each, in turn, same wall time and markdown).
 */
export const CHUNK_COLUMNS = 1600;

/**
 * `widths` cut into consecutive runs of at most VISION_CHUNK lines whose lines times their widest stay within
 * CHUNK_COLUMNS; a line wider than that goes alone. Given narrowest first (as a joining group's pass sorts them),
 * each chunk pads little; runVision keeps its caller's order.
 */
export function chunkByColumns(widths: readonly number[]): number[][] {
  const chunks: number[][] = [];
  let open: number[] = [];
  let widest = 0;
  widths.forEach((w, i) => {
    const padded = Math.max(widest, w);
    if (open.length && (open.length >= VISION_CHUNK || (open.length + 1) * padded > CHUNK_COLUMNS)) {
      chunks.push(open);
      open = [];
      widest = 0;
    }
    open.push(i);
    widest = Math.max(widest, w);
  });
  if (open.length) chunks.push(open);
  return chunks;
}
