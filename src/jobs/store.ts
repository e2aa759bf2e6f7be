/** Where job records live. Every read is scoped to a tenant: another tenant's job simply does not exist. */
import type { JobInput, JobRecord, JobStatus } from './job-record.js';

export type JobPatch = Partial<Omit<JobRecord, 'id' | 'tenant' | 'createdAt'>>;

export interface JobPage {
  /** Newest first, whichever way the page was taken. */
  jobs: JobRecord[];
  /** Where the next page the same way starts: the oldest job here (older), or the newest (newer). */
  endCursor: string | null;
  /** More jobs lie beyond this page, the same way. */
  hasNextPage: boolean;
}

/** Which way a page goes from its cursor: to older jobs (forward through the newest-first list) or to newer ones. */
export type ListDirection = 'older' | 'newer';

export interface JobStore {
  /** A new queued job; `id` when the caller has one already (an idempotency key's claim), else a fresh one. */
  create(tenant: string, input: JobInput, id?: string): Promise<JobRecord>;
  /**
   * Claim an idempotency key for a job id, atomically: the id that holds the key afterwards (this one when the
   * key was free, the first claimant's otherwise). Claims last as long as finished jobs are kept.
   */
  claimKey(tenant: string, key: string, id: string): Promise<string>;
  get(tenant: string, id: string): Promise<JobRecord | null>;
  /** Jobs of this tenant not yet finished (queued or running), for the per-tenant cap. */
  countActive(tenant: string): Promise<number>;
  /** Several jobs in one round trip, in the order asked (null where a job does not exist for this tenant). */
  getMany(tenant: string, ids: readonly string[]): Promise<(JobRecord | null)[]>;
  /**
   * Up to `first` jobs next to `cursor` (a job id), the given way; without a cursor, from the newest (older) or
   * the oldest (newer) end. Pages hold jobs newest first either way.
   */
  list(tenant: string, first: number, cursor?: string, direction?: ListDirection): Promise<JobPage>;
  /** For workers, which act on any tenant's job by id. */
  update(id: string, patch: JobPatch): Promise<JobRecord>;
  /**
   * Apply `patch` only if the job's status is one of `from`, atomically; null when it was not (someone else
   * moved it first). Status changes go through here, so a job is cancelled, started or finished exactly once.
   * With `starts`, only while the job's `starts` is that (absent counts as 0): a worker's run, fenced, changes
   * nothing once a later run has taken the job over.
   */
  transition(id: string, from: readonly JobStatus[], patch: JobPatch, starts?: number): Promise<JobRecord | null>;
  load(id: string): Promise<JobRecord | null>;
}
