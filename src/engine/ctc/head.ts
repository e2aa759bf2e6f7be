/**
 * What the CTC head's output becomes where the vision pass runs (the vision worker on CPU): per-frame
 * log-probabilities in place of the graph's logits, and each row's greedy reading. Both used to be worked out on
 * the main thread, which also runs the decoder's forwards and is the busier of the two (the joint verifier's
 * log-softmax alone was 6% of its time on docling's pages); the vision worker waits for work a third of a page run.
 * Vision graphs written since 0.5.3 give the log-probabilities and row means themselves (training/ctc_outputs.py:
 * onnxruntime's kernels, where this log-softmax was a twelfth of the vision worker's time); ctcLogSoftmax serves
 * graphs exported before, and the golden check.
 */

/** One row's greedy CTC reading: character ids, the frame each was emitted at, and the head's probability there. */
export interface CtcReading {
  ids: number[];
  frames: number[];
  probs: number[];
  /** The mean of the head's distribution over the row's real frames (the script gate's input), where it was taken. */
  mean?: Float32Array;
}

/**
 * Log-softmax over the vocabulary, in place, on each row's real frames ([B, V, vocab], `mask` [B, V] with 1 on a
 * row's real frames, a prefix of its V). Padding frames keep their logits: nothing reads them. Returns each row's
 * mean distribution over its real frames (the script gate's input), taken from the exps the softmax takes anyway.
 */
export function ctcLogSoftmax(x: Float32Array, mask: Float32Array, batch: number, visual: number): Float32Array[] {
  const vocab = x.length / (batch * visual);
  const e = new Float64Array(vocab);
  const means: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const mean = new Float64Array(vocab);
    let frames = 0;
    for (let t = 0; t < visual && mask[b * visual + t] !== 0; t++) {
      const row = (b * visual + t) * vocab;
      // Index loops over the flat array: a subarray and an iterator per frame cost as much as the exps.
      let max = -Infinity;
      for (let c = row; c < row + vocab; c++) if (x[c] > max) max = x[c];
      // A few hundred terms under e^-40 of the largest add under 1e-15 to the sum: float64 noise, and no exp.
      let sum = 0;
      const floor = max - 40;
      for (let c = 0; c < vocab; c++) {
        const v = x[row + c];
        e[c] = v > floor ? Math.exp(v - max) : 0;
        sum += e[c];
      }
      const norm = max + Math.log(sum);
      const inv = 1 / sum;
      for (let c = 0; c < vocab; c++) {
        x[row + c] -= norm;
        mean[c] += e[c] * inv;
      }
      frames++;
    }
    means.push(Float32Array.from(mean, (m) => (frames ? m / frames : 0)));
  }
  return means;
}

/**
 * The greedy CTC reading of each row (repeats collapsed, blanks dropped), from log-probabilities: the column
 * (frame) each character was emitted at, and the head's probability for it there (the CTC drafter's confidence in
 * each drafted character).
 */
export function ctcGreedyFrames(
  logp: Float32Array,
  mask: Float32Array,
  batch: number,
  visual: number,
  blank: number,
): CtcReading[] {
  const vocab = logp.length / (batch * visual);
  const rows: CtcReading[] = [];
  for (let b = 0; b < batch; b++) {
    const ids: number[] = [];
    const frames: number[] = [];
    const probs: number[] = [];
    let prev = -1;
    for (let t = 0; t < visual; t++) {
      if (mask[b * visual + t] === 0) break;
      const off = (b * visual + t) * vocab;
      let best = 0;
      let top = logp[off];
      for (let c = 1; c < vocab; c++) {
        if (logp[off + c] > top) {
          top = logp[off + c];
          best = c;
        }
      }
      if (best !== prev && best !== blank) {
        ids.push(best);
        frames.push(t);
        probs.push(Math.exp(top));
      }
      prev = best;
    }
    rows.push({ ids, frames, probs });
  }
  return rows;
}
