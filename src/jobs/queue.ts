/** Work waiting for a worker. A handler gets the job id and a signal that fires when the job is cancelled. */
export type JobHandler = (jobId: string, signal: AbortSignal) => Promise<void>;

export interface JobQueue {
  enqueue(jobId: string): Promise<void>;
  /** Start taking jobs, at most `concurrency` at once. */
  process(handler: JobHandler, concurrency: number): void;
  /** Stop a queued job before it starts, or signal a running one; true if the queue knew the job. */
  cancel(jobId: string): Promise<boolean>;
  /** Waiting jobs (for metrics and readiness). */
  depth(): Promise<number>;
  close(): Promise<void>;
}
