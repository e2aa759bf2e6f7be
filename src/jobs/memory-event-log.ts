/** The embedded event log: per-job arrays and in-process wake-ups. */
import { EventEmitter } from 'node:events';
import { type EventLog, type JobEvent, isFinal, type Sequenced } from './events.js';

export class MemoryEventLog implements EventLog {
  private readonly logs = new Map<string, Sequenced[]>();
  private readonly wake = new EventEmitter();
  private readonly runs = new Map<string, number>();
  private readonly ended = new Set<string>();

  constructor() {
    this.wake.setMaxListeners(0); // one listener per live subscription
  }

  async publish(jobId: string, event: JobEvent, run = 0): Promise<Sequenced | null> {
    const log = this.logs.get(jobId) ?? [];
    // As the Redis log: nothing after the final event, nothing from a run older than the latest that published.
    if (this.ended.has(jobId) || run < (this.runs.get(jobId) ?? 0)) return null;
    if (run) this.runs.set(jobId, run);
    if (isFinal(event)) this.ended.add(jobId);
    this.logs.set(jobId, log);
    const e = { ...event, seq: log.length + 1, jobId } as Sequenced;
    log.push(e);
    this.wake.emit(jobId);
    return e;
  }

  async *subscribe(jobId: string, afterSeq = 0, signal?: AbortSignal): AsyncIterable<Sequenced> {
    let next = afterSeq; // events are 1-based: log[next] is the one after `next`
    for (;;) {
      const log = this.logs.get(jobId) ?? [];
      // The job has ended and `next` is at or past its final event (a client resuming after the end): done.
      const final = log.findIndex(isFinal);
      if (final >= 0 && next > final) return;
      while (next < log.length) {
        const e = log[next++];
        yield e;
        if (isFinal(e)) return;
      }
      if (signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.wake.off(jobId, done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.wake.on(jobId, done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Forget a job's events (after it is deleted). */
  drop(jobId: string): void {
    this.logs.delete(jobId);
    this.runs.delete(jobId);
    this.ended.delete(jobId);
  }
}
