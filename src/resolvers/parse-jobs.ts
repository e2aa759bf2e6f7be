/** Reading jobs: one by id (batched per request by the ParseJob loader), and the tenant's jobs a page at a time. */
import type { JobRecord } from '../jobs/job.js';
import type { RequestContext } from './context.js';
import { apiError } from './errors.js';

export const MAX_PAGE_SIZE = 100;

/** The loader's batch function: every id asked for in one request, fetched in one round trip. */
export async function loadParseJobs(ids: readonly string[], ctx: RequestContext, tenant: string): Promise<(JobRecord | null)[]> {
  return ctx.jobs.getMany(tenant, ids);
}

export async function listParseJobs(ctx: RequestContext, tenant: string, first: number | null | undefined, after: string | null | undefined): Promise<{ jobs: JobRecord[]; endCursor: string | null; hasNextPage: boolean }> {
  const n = first ?? 20;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) throw apiError('BAD_USER_INPUT', `first must be 1..${MAX_PAGE_SIZE}, got ${n}`);
  return ctx.jobs.list(tenant, n, after ?? undefined);
}
