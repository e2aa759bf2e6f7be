/**
 * A worker: take jobs from the queue, a few at a time (their lines share the engine's batches), and run each.
 * Hooks let the process that hosts it count and log jobs without the worker knowing about metrics or logs.
 */
import { FINISHED } from '../jobs/job-record.js';
import { type JobQueue, LockLost, WorkerStopping } from '../jobs/queue.js';
import { runJob, type WorkerDeps } from './run-job.js';

export interface WorkerHooks {
  started?(jobId: string): void;
  /** `ms`: this worker's run; `sinceSubmitMs`: from submission to the job's end (null: it has none, or is gone). */
  finished?(jobId: string, status: string, ms: number, sinceSubmitMs: number | null): void;
}

export function startWorker(deps: WorkerDeps, queue: JobQueue, concurrency: number, hooks: WorkerHooks = {}): void {
  queue.process(async (jobId, signal, run) => {
    const t0 = performance.now();
    hooks.started?.(jobId);
    // runJob records its own failures; what it throws is an outage with tries left, for the queue to retry, the
    // job handed back because this worker is stopping, or the job lost with its lock (another run may have it).
    let ended: boolean;
    try {
      ended = await runJob(deps, jobId, signal, run);
    } catch (e) {
      if (e instanceof WorkerStopping) hooks.finished?.(jobId, 'handed back', performance.now() - t0, null);
      if (e instanceof LockLost) hooks.finished?.(jobId, 'lock lost', performance.now() - t0, null);
      throw e;
    }
    // Another run ended it, or holds it now: its end is that run's to report, once.
    if (!ended) return hooks.finished?.(jobId, 'nothing to do', performance.now() - t0, null);
    const job = await deps.store.load(jobId).catch(() => null);
    // The record's own times: submitted (by the API), and last changed, which a final job's end is.
    const sinceSubmit =
      job && FINISHED.includes(job.status) ? Date.parse(job.updatedAt) - Date.parse(job.createdAt) : null;
    hooks.finished?.(jobId, job?.status ?? 'unknown', performance.now() - t0, sinceSubmit);
  }, concurrency);
}
