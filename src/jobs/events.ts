/**
 * A job's events, in order, numbered from 1. A subscriber that comes late replays what it missed from the
 * job's log, then follows live, with no gap and no duplicate: the log and the live feed share one sequence.
 */
export type JobEvent =
  | { type: 'token'; page: number; line: number; text: string; fromDraft: boolean[]; drafted?: number }
  | { type: 'region'; page: number; block: number; markdown: string }
  | { type: 'page'; page: number; markdown: string }
  | { type: 'done'; metrics: Record<string, unknown> }
  | { type: 'failed'; code: string; message: string }
  | { type: 'cancelled' }
  /** The job is being read again from the start (its worker died): drop what its token events built so far. */
  | { type: 'restarted'; attempt: number };

export type Sequenced = JobEvent & { seq: number; jobId: string };

export const isFinal = (e: JobEvent): boolean => e.type === 'done' || e.type === 'failed' || e.type === 'cancelled';

export interface EventLog {
  /**
   * Append an event to a job's log; returns it with its sequence number, or null when the log refuses it: the
   * job's final event is in already, or `run` (a worker's run of the job, its `starts`) is older than the latest
   * run that published. A run that lost its job to a later one can then add nothing to its stream.
   */
  publish(jobId: string, event: JobEvent, run?: number): Promise<Sequenced | null>;
  /** Events after `afterSeq` (0 = all), then live ones, ending after the job's final event. */
  subscribe(jobId: string, afterSeq?: number, signal?: AbortSignal): AsyncIterable<Sequenced>;
}
