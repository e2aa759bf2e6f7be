/** Prompt lookup: find where the end of a sequence occurs in a haystack and copy what follows it. */

export interface Match {
  /** Index in the haystack just after the matched suffix. */
  end: number;
  /** Length of the matched suffix. */
  n: number;
}

/**
 * The longest suffix of `seq` (maxN down to minN tokens) found in `haystack`, taking the occurrence nearest
 * to `near` (or the last one when `near` is undefined).
 */
export function findSuffix(haystack: readonly number[], seq: readonly number[], minN: number, maxN: number, near?: number): Match | null {
  for (let n = Math.min(maxN, seq.length); n >= minN; n--) {
    const s = seq.length - n;
    let best = -1;
    for (let i = 0; i + n < haystack.length; i++) {
      let k = 0;
      while (k < n && haystack[i + k] === seq[s + k]) k++;
      if (k < n) continue;
      const end = i + n;
      // Later occurrences win without a hint (the loop runs forward); with one, the nearest wins.
      if (best < 0 || near === undefined || Math.abs(end - near) < Math.abs(best - near)) best = end;
    }
    if (best >= 0) return { end: best, n };
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
