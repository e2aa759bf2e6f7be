/**
 * Recycled Float32Array buffers for the batch's visual K/V and text cache, which are rebuilt whenever lines
 * join or leave the batch. A large fresh allocation pays a page fault per 4 KiB on first touch: on the 2-core
 * benchmark VM, filling a fresh 28 MB array took 80 ms against 2 ms for warm memory, and a page's batch is
 * rebuilt several times. Buffers handed back are reused for the next rebuild of a similar size.
 */
export class FloatPool {
  private free: Float32Array[] = [];
  /** Buffers this pool made: only those come back (an array from elsewhere is left to the GC). */
  private readonly owned = new WeakSet<ArrayBufferLike>();
  private retained = 0;
  private readonly scratches = new Map<string, Float32Array>();

  /**
   * What is held for reuse at most. 128 MiB holds a full batch's visual K and V (32 lines of 400 visual tokens:
   * 2 x 39 MiB) for the next rebuild; 512 MiB read six docbank pages no faster (12.9 s against 12.8 s) and held
   * 100 MiB more at the end.
   */
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
   * An array of this length, on a recycled buffer when one fits without wasting over half of it: zeroed, or, with
   * `zeroed` false, holding whatever finite values the buffer last held (K/V whose unwritten slots are masked out
   * of attention: a masked score is its dot product plus -1e9, whose exponential is exactly 0 either way).
   */
  take(length: number, zeroed = true): Float32Array {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const n = this.free[i].length;
      if (n >= length && n <= 2 * length + 1024 && (best < 0 || n < this.free[best].length)) best = i;
    }
    if (best < 0) {
      const whole = new Float32Array(length);
      this.owned.add(whole.buffer);
      return whole;
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
    while (this.retained > this.maxBytes && this.free.length) this.retained -= (this.free.shift() as Float32Array).byteLength;
  }
}
