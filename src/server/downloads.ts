/** GET /jobs/{id}/searchable.pdf: a job's searchable PDF for the tenant whose key asks, as the job is theirs. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Jobs } from '../jobs/jobs.js';
import { loadSearchablePdf } from '../resolvers/downloads.js';
import type { ApiKeys } from './auth.js';

function answer(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}

export async function serveDownload(
  req: IncomingMessage,
  res: ServerResponse,
  jobId: string,
  deps: { jobs: Jobs; keys: ApiKeys; report: (e: unknown) => void },
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return answer(res, 405, 'METHOD_NOT_ALLOWED', 'downloads are fetched with GET');
  }
  const auth = deps.keys.authenticate(req.headers.authorization);
  if (!auth.ok)
    return answer(res, 401, 'UNAUTHENTICATED', 'send the API key the job was made with: "Authorization: Bearer <key>"');
  let pdf: Awaited<ReturnType<typeof loadSearchablePdf>>;
  try {
    pdf = await loadSearchablePdf(deps.jobs, auth.tenant, jobId);
  } catch (e) {
    deps.report(e);
    return answer(res, 503, 'STORE_UNAVAILABLE', 'the job store did not answer; try again');
  }
  // Another tenant's job and no job at all look the same: nothing here says a job exists.
  if (!pdf)
    return answer(
      res,
      404,
      'NOT_FOUND',
      'no searchable PDF for this job: it is not yours, not finished, or did not ask for SEARCHABLE_PDF',
    );
  const ascii = pdf.fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  res.writeHead(200, {
    'content-type': 'application/pdf',
    'content-length': String(pdf.bytes.length),
    'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(pdf.fileName)}`,
    'cache-control': 'private, no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : Buffer.from(pdf.bytes.buffer, pdf.bytes.byteOffset, pdf.bytes.length));
}
