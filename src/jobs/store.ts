/** Where job records live. Every read is scoped to a tenant: another tenant's job simply does not exist. */
import type { JobInput, JobRecord } from './job.js';

export interface JobPage {
  jobs: JobRecord[];
  /** Cursor of the last job on this page; pass it as `after` for the next page. */
  endCursor: string | null;
  hasNextPage: boolean;
}

export interface JobStore {
  create(tenant: string, input: JobInput): Promise<JobRecord>;
  get(tenant: string, id: string): Promise<JobRecord | null>;
  /** Newest first. */
  list(tenant: string, first: number, after?: string): Promise<JobPage>;
  /** For workers, which act on any tenant's job by id. */
  update(id: string, patch: Partial<Omit<JobRecord, 'id' | 'tenant' | 'createdAt'>>): Promise<JobRecord>;
  load(id: string): Promise<JobRecord | null>;
}
