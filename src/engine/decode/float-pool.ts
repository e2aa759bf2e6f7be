/**
 * Recycled Float32Array buffers for the batch's visual K/V and text cache, which are rebuilt whenever lines
 * join or leave the batch. A large fresh allocation pays a page fault per 4 KiB on first touch: on the 2-core
 * benchmark VM, filling a fresh 28 MB array took 80 ms against 2 ms for warm memory, and a page's batch is
 * rebuilt several times. Every fresh array also counts against V8's external-memory budget, and each 64 MB of it
 * starts a full garbage collection.
 *
 * The batch's sizes change with every join and compaction (its rows, its widest line), so an array is served by
 * the smallest free buffer that holds it, whatever its size, and buffers are made in size classes (steps of
 * sqrt 2) so that one made for a rebuild fits the next ones of about its size. Matching sizes closely (a buffer
 * at most twice the array) missed on most rebuilds: docling's 34 pages made 1,722 fresh arrays, 1.8 GB.
 */
export class FloatPool {
  private free: Float32Array[] = [];
  /** Buffers this pool made: only those come back (an array from elsewhere is left to the GC). */
  private readonly owned = new WeakSet<ArrayBufferLike>();
  private retained = 0;
  private readonly scratches = new Map<string, Float32Array>();

  /** What is held for reuse at most (the scheduler sizes it to its batch: decode/scheduler.ts poolBytes). */
  constructor(private readonly maxBytes = 128 * 2 ** 20) {}

  /** Bytes held for reuse by take(). */
  get bytes(): number {
    return this.retained;
  }

  /** Everything held: buffers for reuse and the scratch buffers. */
  get heldBytes(): number {
    let n = this.retained;
    for (const b of this.scratches.values()) n += b.byteLength;
    return n;
  }

  /** Let everything held go to the GC (an idle engine: a resting server should not keep a busy batch's buffers). */
  clear(): void {
    this.free = [];
    this.retained = 0;
    this.scratches.clear();
  }

  /**
   * An array of this length, on the smallest free buffer that holds it: zeroed, or, with `zeroed` false, holding
   * whatever finite values the buffer last held (K/V whose unwritten slots are masked out of attention: a masked
   * score is its dot product plus -1e9, whose exponential is exactly 0 either way).
   */
  take(length: number, zeroed = true): Float32Array {
    let best = -1;
    // Among equals, the most recently handed back: its pages are the likeliest still in cache.
    for (let i = this.free.length - 1; i >= 0; i--) {
      const n = this.free[i].length;
      if (n >= length && (best < 0 || n < this.free[best].length)) best = i;
    }
    if (best < 0) {
      const size = sizeClass(length);
      const whole = new Float32Array(size);
      this.owned.add(whole.buffer);
      return whole.subarray(0, length);
    }
    const [whole] = this.free.splice(best, 1);
    this.retained -= whole.byteLength;
    const view = whole.subarray(0, length);
    if (zeroed) view.fill(0);
    return view;
  }

  /**
   * A buffer for one use at a time, step after step (a pruned forward's gathered visual K/V): kept by `key`, grown
   * when too small, never zeroed and never handed back. Taken fresh each step instead, a batch of 32 regions' gather
   * (tens of MB, over the pool's cap) paid its page faults on every forward: 190 ms against 54 for the unpruned one.
   */
  scratch(key: string, length: number): Float32Array {
    let buf = this.scratches.get(key);
    if (!buf || buf.length < length) {
      buf = new Float32Array(Math.ceil(length * 1.25));
      this.scratches.set(key, buf);
    }
    return buf.subarray(0, length);
  }

  /** Hand back arrays from take() that nothing reads any more; anything else is ignored, and so is a repeat. */
  give(...arrays: Float32Array[]): void {
    for (const a of arrays) {
      if (!this.owned.has(a.buffer) || this.free.some((f) => f.buffer === a.buffer)) continue;
      const whole = new Float32Array(a.buffer);
      this.free.push(whole);
      this.retained += whole.byteLength;
    }
    // Over the cap: the oldest buffers go back to the GC.
    while (this.retained > this.maxBytes && this.free.length)
      this.retained -= (this.free.shift() as Float32Array).byteLength;
  }
}

/**
 * The class an array of `length` floats is allocated in: the next step of sqrt 2 (in whole KiB of floats) at or above
 * it.
 */
export function sizeClass(length: number): number {
  if (length <= 1024) return 1024;
  const step = Math.ceil(2 * Math.log2(length / 1024));
  // Rounding may land a step a hair under `length`: then the next one.
  for (let k = step; ; k++) {
    const size = 1024 * Math.ceil(2 ** (k / 2));
    if (size >= length) return size;
  }
}
