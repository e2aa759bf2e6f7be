/**
 * Admission by memory: the pixels of the pages being rendered and laid out at once, across every document this
 * process reads, stay within a budget. A page waits its turn rather than add its full-size copies beside others'
 * (six blank 9999x9999 PNGs at once took 1.46 GB). A page larger than the whole budget is admitted alone.
 */
import type { SourceLimits } from '../document/source.js';

export class PixelBudget {
  private used = 0;
  private readonly waiting: { pixels: number; admit: () => void }[] = [];
  /** The most pixels ever admitted at once. */
  peak = 0;

  constructor(readonly capacity: number) {
    if (!(capacity > 0)) throw new RangeError(`a pixel budget must be positive, got ${capacity}`);
  }

  /** Wait until `pixels` fit (or nothing else is admitted), then hold them until the returned release is called. */
  async acquire(pixels: number, signal?: AbortSignal): Promise<() => void> {
    const n = Math.min(Math.max(0, pixels), this.capacity);
    if (!this.waiting.length && this.used + n <= this.capacity) {
      this.take(n);
      return this.releaser(n);
    }
    await new Promise<void>((resolve, reject) => {
      const entry = { pixels: n, admit: resolve };
      this.waiting.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.waiting.indexOf(entry);
          if (at < 0) return;
          this.waiting.splice(at, 1);
          reject(signal.reason);
          this.next();
        },
        { once: true },
      );
    });
    return this.releaser(n); // next() took the pixels when it admitted this waiter
  }

  private take(n: number): void {
    this.used += n;
    this.peak = Math.max(this.peak, this.used);
  }

  private releaser(n: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= n;
      this.next();
    };
  }

  /** Admit waiters in order while the first fits (first come, first served: a large page is not starved). */
  private next(): void {
    while (this.waiting.length && this.used + this.waiting[0].pixels <= this.capacity) {
      const w = this.waiting.shift() as { pixels: number; admit: () => void };
      this.take(w.pixels);
      w.admit();
    }
  }
}

/** One budget for each size asked for: every document this process reads with the same limits shares it. */
const budgets = new Map<number, PixelBudget>();

export function sharedPixelBudget(limits: SourceLimits): PixelBudget {
  const capacity = limits.pixelsInFlight ?? limits.maxPixels;
  let b = budgets.get(capacity);
  if (!b) budgets.set(capacity, (b = new PixelBudget(capacity)));
  return b;
}

/** `run` once `pixels` fit the process's budget for these limits; they are held until it settles. */
export async function withPixels<T>(
  limits: SourceLimits,
  pixels: Promise<number>,
  signal: AbortSignal | undefined,
  run: () => Promise<T>,
): Promise<T> {
  const release = await sharedPixelBudget(limits).acquire(await pixels, signal);
  try {
    return await run();
  } finally {
    release();
  }
}
