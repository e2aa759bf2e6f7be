/** Prompt lookup: find where the end of a sequence occurs in earlier text and copy what followed it. */

export interface Match {
  /** Index in the haystack just after the matched suffix. */
  end: number;
  /** Length of the matched suffix. */
  n: number;
}

/**
 * Occurrences one lookup examines at most: those nearest `near` (else the latest). A text where a short n-gram
 * recurs hundreds of thousands of times (a hostile reference, a long column of one digit) must not make every
 * decoder step of every line scan them all; past this many, the nearest ones are the likeliest matches anyway.
 */
export const MAX_EXAMINED = 256;

/**
 * Text to look up in, indexed by its n-grams so a lookup costs the number of occurrences, not the length of
 * the text (a reference can be a whole PDF's text layer). Append-only.
 */
export class TokenIndex {
  readonly tokens: number[] = [];
  private readonly grams = new Map<string, number[]>();

  constructor(readonly minN: number) {}

  push(ids: readonly number[]): void {
    for (const id of ids) {
      this.tokens.push(id);
      const start = this.tokens.length - this.minN;
      if (start < 0) continue;
      const key = this.tokens.slice(start).join(',');
      const at = this.grams.get(key);
      if (at) at.push(start);
      else this.grams.set(key, [start]);
    }
  }

  /**
   * The longest suffix of `seq` (minN..maxN tokens) that occurs here with at least one token after it; ties go
   * to the occurrence nearest `near`, or to the latest one. Of many occurrences, the MAX_EXAMINED nearest are seen.
   */
  find(seq: readonly number[], maxN: number, near?: number): Match | null {
    if (seq.length < this.minN) return null;
    const starts = this.grams.get(seq.slice(seq.length - this.minN).join(','));
    if (!starts) return null;
    let best: Match | null = null;
    let lo = 0;
    let hi = starts.length;
    if (starts.length > MAX_EXAMINED) {
      // starts are ascending: centre the window on the first occurrence ending at or after `near`.
      let centre = starts.length;
      if (near !== undefined) {
        let a = 0;
        let b = starts.length;
        while (a < b) {
          const m = (a + b) >> 1;
          if (starts[m] + this.minN < near) a = m + 1;
          else b = m;
        }
        centre = a;
      }
      lo = Math.max(0, Math.min(centre - MAX_EXAMINED / 2, starts.length - MAX_EXAMINED));
      hi = lo + MAX_EXAMINED;
    }
    for (let i = lo; i < hi; i++) {
      const s = starts[i];
      const end = s + this.minN;
      if (end >= this.tokens.length) continue;
      let n = this.minN;
      while (
        n < maxN &&
        n < seq.length &&
        s - (n - this.minN) - 1 >= 0 &&
        this.tokens[s - (n - this.minN) - 1] === seq[seq.length - n - 1]
      )
        n++;
      const better =
        !best ||
        n > best.n ||
        (n === best.n && (near === undefined ? end > best.end : Math.abs(end - near) < Math.abs(best.end - near)));
      if (better) best = { end, n };
    }
    return best;
  }
}

/** The same lookup by a plain scan, for short texts (a line's own prefix). */
export function findSuffix(
  haystack: readonly number[],
  seq: readonly number[],
  minN: number,
  maxN: number,
): Match | null {
  for (let n = Math.min(maxN, seq.length); n >= minN; n--) {
    const s = seq.length - n;
    for (let i = haystack.length - n - 1; i >= 0; i--) {
      let k = 0;
      while (k < n && haystack[i + k] === seq[s + k]) k++;
      if (k === n) return { end: i + n, n };
    }
  }
  return null;
}

/** Up to k tokens of the haystack from `start`, stopping after an EOS (a line ends there). */
export function continuation(haystack: readonly number[], start: number, k: number, eos: number): number[] {
  const out: number[] = [];
  for (let i = start; i < haystack.length && out.length < k; i++) {
    out.push(haystack[i]);
    if (haystack[i] === eos) break;
  }
  return out;
}
