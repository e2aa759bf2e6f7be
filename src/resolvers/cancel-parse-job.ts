/** cancelParseJob: a waiting job is dropped, a running one stops within a decoder step; both say so in their events. */
import type { JobRecord } from '../jobs/job-record.js';
import type { TenantContext } from './context.js';
import { NotFoundError } from './errors.js';
import { isJobId } from './job-id.js';

export async function cancelParseJob(id: string, ctx: TenantContext): Promise<JobRecord> {
  if (!isJobId(id)) throw new NotFoundError(id);
  const job = await ctx.jobs.cancel(ctx.tenant, id);
  if (!job) throw new NotFoundError(id);
  return job;
}
