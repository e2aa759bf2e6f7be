import type { Bundle } from '../bundle/bundle.js';

/**
 * Text positions: where a token sits given where the token before it sits, and where a mask block's slots sit.
 * A line bundle counts up. A region bundle counts up within a line, and a line break (BOS) opens the next line at
 * its index 0 (position line * lineStride + index), so every line of a region reuses the line model's positions.
 */
export interface PositionRule {
  next(prev: number, token: number): number;
  block(base: number, k: number): number;
  /**
   * The token that may not follow a token at `pos` in a sequence of `lines` lines (-1: none). A region's line
   * count is known (the layout found its crops), so it ends after its last line and not before: no EOS before
   * the last line, no line break on it. Without this the model alone decides, and ending one line early or
   * reading an invented line after the last costs a region a whole line.
   */
  forbidden(pos: number, lines: number): number;
}

/** These logits with `token` ruled out (a copy; the same array when token < 0). */
export function withForbidden(logits: Float32Array, token: number): Float32Array {
  if (token < 0) return logits;
  const out = logits.slice();
  out[token] = -1e9;
  return out;
}

export function positionRule(bundle: Bundle): PositionRule {
  const { maxText } = bundle.config.dims;
  const region = bundle.config.region;
  if (!region)
    return { next: (prev) => prev + 1, block: (base, k) => Math.min(maxText - 1, base + 1 + k), forbidden: () => -1 };
  const S = region.lineStride;
  const { bos, eos } = bundle.config.specialIds;
  const start = (p: number): number => Math.floor(p / S) * S;
  return {
    next: (prev, token) => (token === bos ? start(prev) + S : Math.min(prev + 1, start(prev) + S - 1)),
    block: (base, k) => start(base) + Math.min(S - 1, (base % S) + 1 + k),
    forbidden: (pos, lines) => (Math.floor(pos / S) < lines - 1 ? eos : bos),
  };
}
