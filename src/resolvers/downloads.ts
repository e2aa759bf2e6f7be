/**
 * Outputs too big for a GraphQL answer (a searchable PDF) are fetched over plain HTTP, from a path the job names
 * (ParseJob.searchablePdf.url), with the same API key and the same tenant check as the job itself.
 */
import { searchablePdfKey } from '../jobs/job-record.js';
import type { Jobs } from '../jobs/jobs.js';
import { isJobId } from './job-id.js';

// Any segment: one that is not a job id gets this route's own not-found answer, as an unknown id does.
const PDF_PATH = /^\/jobs\/([^/]+)\/searchable\.pdf$/;

export function searchablePdfPath(jobId: string): string {
  return `/jobs/${jobId}/searchable.pdf`;
}

/** The job id a download path names, or null when it is not one. */
export function downloadJobId(path: string): string | null {
  return PDF_PATH.exec(path)?.[1] ?? null;
}

/** The tenant's job's searchable PDF and the name to save it under; null when this tenant has no such PDF. */
export async function loadSearchablePdf(
  jobs: Jobs,
  tenant: string,
  jobId: string,
): Promise<{ bytes: Uint8Array; fileName: string } | null> {
  if (!isJobId(jobId)) return null;
  const job = await jobs.get(tenant, jobId);
  if (!job?.result?.pdf || !('bytes' in job.result.pdf)) return null;
  const bytes = await jobs.backends.blobs.get(searchablePdfKey(jobId));
  if (!bytes) return null;
  return { bytes, fileName: `${job.input.fileName.replace(/\.[A-Za-z0-9]{1,5}$/, '')}.searchable.pdf` };
}
