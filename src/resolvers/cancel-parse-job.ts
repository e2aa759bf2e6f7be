/** cancelParseJob: a waiting job is dropped, a running one stops within a decoder step; both say so in their events. */
import type { JobRecord } from '../jobs/job.js';
import type { RequestContext } from './context.js';
import { NotFoundError } from './errors.js';

export async function cancelParseJob(id: string, ctx: RequestContext, tenant: string): Promise<JobRecord> {
  const job = await ctx.jobs.cancel(tenant, id);
  if (!job) throw new NotFoundError(id);
  return job;
}
