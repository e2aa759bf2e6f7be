/** The embedded queue: jobs run in this process, a few at a time (their lines still share engine batches). */
import type { JobHandler, JobQueue } from './queue.js';

export class MemoryJobQueue implements JobQueue {
  private readonly waiting: string[] = [];
  private readonly running = new Map<string, AbortController>();
  /** The running handlers, so close() can wait for them to record their end before the engine goes. */
  private readonly settling = new Set<Promise<void>>();
  private handler: JobHandler | null = null;
  private concurrency = 1;
  private closed = false;

  async enqueue(jobId: string): Promise<void> {
    this.waiting.push(jobId);
    this.pump();
  }

  process(handler: JobHandler, concurrency: number): void {
    this.handler = handler;
    this.concurrency = Math.max(1, concurrency);
    this.pump();
  }

  async cancel(jobId: string): Promise<boolean> {
    const i = this.waiting.indexOf(jobId);
    if (i >= 0) {
      this.waiting.splice(i, 1);
      return true;
    }
    const ctrl = this.running.get(jobId);
    ctrl?.abort();
    return ctrl !== undefined;
  }

  async depth(): Promise<number> {
    return this.waiting.length;
  }

  /** Abort what runs and wait (a few seconds at most) for those jobs to record their end. */
  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.running.values()) c.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(this.settling),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 5_000);
      }),
    ]);
    clearTimeout(timer);
  }

  private pump(): void {
    while (!this.closed && this.handler && this.running.size < this.concurrency && this.waiting.length) {
      const id = this.waiting.shift() as string;
      const ctrl = new AbortController();
      this.running.set(id, ctrl);
      // A handler that throws has already recorded its failure; the queue only moves on.
      const settled: Promise<void> = this.handler(id, ctrl.signal, { attempt: 1 })
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          this.running.delete(id);
          this.settling.delete(settled);
          this.pump();
        });
      this.settling.add(settled);
    }
  }
}
