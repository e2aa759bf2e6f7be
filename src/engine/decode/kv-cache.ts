/**
 * The text KV cache: static capacity per batch, one row per sequence, laid out [L, B, H, C, dh] as the
 * decoder graph takes it. The graph returns only the NEW tokens' K/V; `commit` writes the ones a verifier
 * kept into each row's next slots, so nothing of size O(cache) crosses the ORT boundary per step.
 */
import type { FloatPool } from './float-pool.js';

const CHUNK = 32;

export class KvCache {
  k: Float32Array;
  v: Float32Array;
  /** Committed tokens per row. */
  lengths: Int32Array;
  capacity: number;
  batch: number;

  constructor(
    readonly layers: number,
    readonly heads: number,
    readonly headDim: number,
    batch: number,
    capacity = CHUNK,
    /** Where rebuilt arrays come from and old ones go back (rows join and leave often). */
    private readonly pool?: FloatPool,
  ) {
    this.batch = batch;
    this.capacity = capacity;
    this.k = this.array(layers * batch * heads * capacity * headDim);
    this.v = this.array(this.k.length);
    this.lengths = new Int32Array(batch);
  }

  get dims(): number[] {
    return [this.layers, this.batch, this.heads, this.capacity, this.headDim];
  }

  /** Make room for `extra` more tokens in the longest row (grows by whole chunks, copying once). */
  reserve(extra: number): void {
    const need = Math.max(...this.lengths) + extra;
    if (need <= this.capacity) return;
    const cap = Math.ceil(need / CHUNK) * CHUNK;
    this.relayout(
      Array.from({ length: this.batch }, (_, i) => i),
      cap,
    );
  }

  /**
   * Write the kept new tokens: newK/newV are [L, B, H, T, dh]; picks[b] lists, in order, which of the T
   * new positions row b commits (a chain prefix, or a root path through a tree).
   */
  commit(newK: Float32Array, newV: Float32Array, t: number, picks: readonly (readonly number[])[]): void {
    this.reserve(Math.max(0, ...picks.map((p) => p.length)));
    const { layers, heads, headDim: dh, batch } = this;
    for (let l = 0; l < layers; l++) {
      for (let b = 0; b < batch; b++) {
        const pick = picks[b];
        if (!pick.length) continue;
        const len = this.lengths[b];
        for (let h = 0; h < heads; h++) {
          const src = ((l * batch + b) * heads + h) * t * dh;
          const dst = (((l * batch + b) * heads + h) * this.capacity + len) * dh;
          // One copy per run of consecutive positions: a chain's accepted prefix is a single run.
          for (let i = 0; i < pick.length;) {
            let j = i + 1;
            while (j < pick.length && pick[j] === pick[j - 1] + 1) j++;
            const s = src + pick[i] * dh;
            this.k.set(newK.subarray(s, s + (j - i) * dh), dst + i * dh);
            this.v.set(newV.subarray(s, s + (j - i) * dh), dst + i * dh);
            i = j;
          }
        }
      }
    }
    picks.forEach((p, b) => (this.lengths[b] += p.length));
  }

  /** Keep only these rows, in this order (sequences that finished leave the batch). */
  keepRows(rows: readonly number[]): void {
    this.relayout(rows, this.capacity);
  }

  /** Add n empty rows at the end (sequences joining the batch). */
  addRows(n: number): void {
    this.relayout(
      [...Array.from({ length: this.batch }, (_, i) => i), ...Array.from({ length: n }, () => -1)],
      this.capacity,
    );
  }

  /** Not zeroed from the pool: a row's slots past its length are masked out of attention (attn_bias), never read. */
  private array(n: number): Float32Array {
    return this.pool ? this.pool.take(n, false) : new Float32Array(n);
  }

  /** Give the arrays back to the pool; the cache is not used again. */
  release(): void {
    this.pool?.give(this.k, this.v);
  }

  private relayout(rows: readonly number[], capacity: number): void {
    const { layers, heads, headDim: dh } = this;
    const oldB = this.batch;
    const oldC = this.capacity;
    const nb = rows.length;
    const k = this.array(layers * nb * heads * capacity * dh);
    const v = this.array(k.length);
    const copy = Math.min(oldC, capacity) * dh;
    for (let l = 0; l < layers; l++) {
      rows.forEach((r, nbIdx) => {
        if (r < 0) return; // a new row starts empty
        for (let h = 0; h < heads; h++) {
          const src = ((l * oldB + r) * heads + h) * oldC * dh;
          const dst = ((l * nb + nbIdx) * heads + h) * capacity * dh;
          k.set(this.k.subarray(src, src + copy), dst);
          v.set(this.v.subarray(src, src + copy), dst);
        }
      });
    }
    this.pool?.give(this.k, this.v);
    this.k = k;
    this.v = v;
    this.lengths = Int32Array.from(rows, (r) => (r < 0 ? 0 : this.lengths[r]));
    this.batch = nb;
    this.capacity = capacity;
  }
}
