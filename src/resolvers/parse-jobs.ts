/** Reading jobs: one by id (batched per request by the ParseJob loader), and the tenant's jobs a page at a time. */
import type { JobRecord } from '../jobs/job-record.js';
import type { RequestContext, TenantContext } from './context.js';
import { apiError } from './errors.js';
import { isJobId } from './job-id.js';

export const MAX_PAGE_SIZE = 100;

/**
 * The loader's batch function: every id asked for in one request, fetched in one round trip. An id the store
 * never made is null, as an unknown one is, without being looked up.
 */
export async function loadParseJobs(
  ids: readonly string[],
  ctx: RequestContext,
  tenant: string,
): Promise<(JobRecord | null)[]> {
  const wellFormed = ids.filter(isJobId);
  const found = wellFormed.length ? await ctx.jobs.getMany(tenant, wellFormed) : [];
  const byId = new Map(wellFormed.map((id, i) => [id, found[i]]));
  return ids.map((id) => byId.get(id) ?? null);
}

export interface JobsPageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/**
 * One page of the tenant's jobs, newest first, as a Relay connection pages: `first`/`after` towards older jobs,
 * `last`/`before` towards newer ones (both at once is refused).
 */
export async function listParseJobs(
  ctx: TenantContext,
  args: JobsPageArgs,
): Promise<{ jobs: JobRecord[]; hasNextPage: boolean; hasPreviousPage: boolean }> {
  const backward = args.last != null || args.before != null;
  if (backward && (args.first != null || args.after != null))
    throw apiError(
      'BAD_USER_INPUT',
      'page one way: first and after (towards older jobs), or last and before (towards newer ones)',
    );
  const n = (backward ? args.last : args.first) ?? 20;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE)
    throw apiError('BAD_USER_INPUT', `${backward ? 'last' : 'first'} must be 1..${MAX_PAGE_SIZE}, got ${n}`);
  const cursor = (backward ? args.before : args.after) ?? undefined;
  const page = await ctx.jobs.list(ctx.tenant, n, cursor, backward ? 'newer' : 'older');
  // Whether jobs lie past the cursor itself is not looked up: there are when a cursor was given (Relay allows this).
  return backward
    ? { jobs: page.jobs, hasPreviousPage: page.hasNextPage, hasNextPage: cursor !== undefined }
    : { jobs: page.jobs, hasNextPage: page.hasNextPage, hasPreviousPage: cursor !== undefined };
}
