/** Work waiting for a worker. A handler gets the job id and a signal that fires when the job is cancelled. */
export interface JobRun {
  /** 1 for the first try; more when the job is taken up again (its worker died, or it stalled). */
  attempt: number;
  /** Tries the queue still has for this job after this one (0 or absent: this is the last). */
  attemptsLeft?: number;
  /** The tenant the job belongs to, when the queue was told (per-tenant limits use it). */
  tenant?: string;
}

/**
 * Why a queue aborts a running job's signal when its worker is stopping (a deploy, a scale-down): not a
 * cancellation. The handler throws it back, and the queue returns the job to waiting for another worker.
 */
export class WorkerStopping extends Error {
  constructor() {
    super('the worker is stopping; the job goes back to the queue');
    this.name = 'WorkerStopping';
  }
}

/**
 * Why a queue aborts a running job's signal when its worker lost the job's lock (it could not renew it in time,
 * e.g. Redis froze): the job may already run elsewhere, so this run stops and writes nothing more for it.
 */
export class LockLost extends Error {
  constructor() {
    super("the worker lost the job's lock; another worker may run it");
    this.name = 'LockLost';
  }
}

/** What a handler resolves with is not used. */
export type JobHandler = (jobId: string, signal: AbortSignal, run: JobRun) => Promise<unknown>;

export interface JobQueue {
  enqueue(jobId: string, opts?: { tenant?: string }): Promise<void>;
  /** Start taking jobs, at most `concurrency` at once. */
  process(handler: JobHandler, concurrency: number): void;
  /** Stop a queued job before it starts, or signal a running one; true if the queue knew the job. */
  cancel(jobId: string): Promise<boolean>;
  /** Waiting jobs (for metrics and readiness). */
  depth(): Promise<number>;
  /**
   * Stop taking jobs. A queue that outlives its workers lets running jobs finish for a grace period, then aborts
   * them with WorkerStopping and hands them back; the embedded queue's jobs die with the process either way.
   */
  close(): Promise<void>;
}
