/**
 * A worker's handling of one job: take the bytes, read the document, stream token, region and page events
 * as they happen, store the result, and end with exactly one final event (done, failed or cancelled). A
 * failing job records a typed error; it never throws out of here, except to hand the job back: a backend outage
 * with tries left, its worker stopping, or its worker having lost the job's lock. Each run is numbered (the job's
 * `starts`) and fences its writes with that number, so a run that a later one took over changes nothing more.
 */
import { DocumentError } from '../document/errors.js';
import { type RenderInput, renderTextFormat, type WordFormat } from '../document/formats/index.js';
import { searchablePdf } from '../document/formats/searchable-pdf.js';
import { DEFAULT_SOURCE_LIMITS, type SourceLimits } from '../document/source.js';
import type { Engine } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import type { BlobStore } from '../jobs/blob-store.js';
import { type JobError, type JobResult, searchablePdfKey } from '../jobs/job-record.js';
import { formatsOf, type OutputFormat, resolveReading } from '../options/reading-options.js';
import { BlobTooLargeError } from '../jobs/redis-blob-store.js';
import type { EventLog, JobEvent } from '../jobs/events.js';
import { type JobRun, LockLost, WorkerStopping } from '../jobs/queue.js';
import type { JobStore } from '../jobs/store.js';
import { SOFTWARE_NAME, softwareVersion } from '../version.js';
import type { FormulaReader } from './formula-reader.js';
import { readDocument } from './read-document.js';

export interface WorkerDeps {
  engine: Engine;
  store: JobStore;
  blobs: BlobStore;
  events: EventLog;
  /** Pages, pixels and rendering limits for the documents this worker reads. */
  limits?: SourceLimits;
  /** Unexpected errors (not the input's fault) go here, e.g. to Sentry. */
  report?: (error: unknown, jobId: string) => void;
  /** Reads display formulas as LaTeX (absent: formulas are read as text). */
  formulas?: FormulaReader | null;
  /** Each page read, with the milliseconds since its rendering began (for the page latency metric). */
  onPageRead?: (ms: number) => void;
}

/** Runs the job; true when this run ended it, false when there was nothing to do (ended or taken already). */
export async function runJob(
  deps: WorkerDeps,
  jobId: string,
  signal: AbortSignal,
  run: JobRun = { attempt: 1 },
): Promise<boolean> {
  const own: Own = {};
  try {
    return await readJob(deps, jobId, signal, run, own);
  } catch (e) {
    // The worker is stopping, or lost the job: it stays RUNNING with its bytes, for another worker.
    if (e instanceof WorkerStopping || e instanceof LockLost) throw e;
    // Not the document's fault and not decoding's: a backend broke (a store or log outage). With tries left,
    // the queue takes the job up again later (it stays RUNNING and its next worker takes it over); on the last
    // try it ends as INTERNAL.
    deps.report?.(e, jobId);
    if ((run.attemptsLeft ?? 0) > 0) throw e;
    const error: JobError = { code: 'INTERNAL', message: 'the job failed unexpectedly; it has been reported' };
    try {
      if (await deps.store.transition(jobId, ['queued', 'running'], { status: 'failed', error }, own.starts)) {
        await deps.events.publish(jobId, { type: 'failed', ...error }, own.starts);
        return true;
      }
    } catch (e2) {
      deps.report?.(e2, jobId);
    }
    return false;
  }
}

/** This run's number (the job's `starts` it wrote), once it has taken the job. */
interface Own {
  starts?: number;
}

async function readJob(deps: WorkerDeps, jobId: string, signal: AbortSignal, run: JobRun, own: Own): Promise<boolean> {
  const { store, events, blobs, engine } = deps;
  const job = await store.load(jobId);
  // Finished or cancelled while waiting: nothing to do. RUNNING means its last worker died (or a backend broke
  // under it): this worker takes it over and reads it again from the start.
  if (!job || (job.status !== 'queued' && job.status !== 'running')) return false;
  const from = job.status;
  const bytes = await blobs.get(jobId);
  if (!bytes) {
    const error: JobError = { code: 'INPUT_LOST', message: 'the uploaded file is no longer stored' };
    if (!(await store.transition(jobId, [from], { status: 'failed', error }, job.starts ?? 0))) return false;
    await events.publish(jobId, { type: 'failed', ...error });
    return true;
  }
  // Counted on the job itself: the queue's own count does not move when a dead worker's job is taken over. Taken
  // only from the `starts` this run read: of two runs that read the same, one takes the job.
  const starts = (job.starts ?? 0) + 1;
  const progress = { pagesDone: 0, pagesTotal: 0 };
  // Cancelled, or taken by another run, just now: nothing for this one to do.
  if (!(await store.transition(jobId, [from], { status: 'running', progress, starts }, job.starts ?? 0))) return false;
  own.starts = starts;
  // Before any token of this run: a client drops what the earlier run's tokens built (docs/api.md).
  if (from === 'running') await events.publish(jobId, { type: 'restarted', attempt: starts }, starts);
  // Progress and events from inside decoding callbacks go out one after another, in the order they happened
  // (an async event log must not number a later event first); the final event waits for all of them.
  let chain: Promise<unknown> = Promise.resolve();
  const fire = (write: () => Promise<unknown>): void => {
    chain = chain.then(write).catch((e: unknown) => deps.report?.(e, jobId));
  };
  const publish = (e: JobEvent): Promise<unknown> => events.publish(jobId, e, starts);
  let pagesDone = 0;
  let pagesTotal = 0;
  // Resolved at submission; a job stored by an earlier version may lack some, which take their defaults here.
  const { fileName: _name, size: _size, source: _source, decoding, ...asked } = job.input;
  const reading = resolveReading(asked);
  const formats = formatsOf(reading);
  const limits = deps.limits ?? DEFAULT_SOURCE_LIMITS;
  let ended = false;
  try {
    const doc = await readDocument(engine, bytes, job.input.fileName, {
      ...reading,
      decoding,
      formulas: reading.formulas ? (deps.formulas ?? null) : null,
      ...(deps.limits ? { limits: deps.limits } : {}),
      signal,
      onOpen: (pages) => {
        pagesTotal = pages.length;
        fire(() => store.transition(jobId, ['running'], { progress: { pagesDone, pagesTotal } }, starts));
      },
      onTokens: (page, line, text, fromDraft, drafted) =>
        fire(() => publish({ type: 'token', page, line, text, fromDraft: [...fromDraft], drafted })),
      onPage: (page, ms) => {
        deps.onPageRead?.(ms);
        pagesDone++;
        page.blocks.forEach((b) =>
          fire(() => publish({ type: 'region', page: page.index, block: b.order, markdown: b.markdown })),
        );
        fire(() => publish({ type: 'page', page: page.index, markdown: page.markdown }));
        fire(() => store.transition(jobId, ['running'], { progress: { pagesDone, pagesTotal } }, starts));
      },
    });
    await chain;
    const metrics = { ...doc.metrics };
    const render: RenderInput = {
      bytes,
      fileName: job.input.fileName,
      format: doc.format,
      pages: doc.pages,
      pdfDpi: limits.pdfDpi,
      software: { name: SOFTWARE_NAME, version: softwareVersion() },
    };
    const { rendered, pdf } = await renderFormats(deps, jobId, render, formats);
    // Lost while it rendered: the job is another run's now, which writes its result.
    if (signal.reason instanceof LockLost) throw signal.reason;
    const result = { ...resultOf(doc, formats), ...rendered, ...(pdf ? { pdf } : {}), metrics };
    const pages = doc.pages.length;
    const finished = { status: 'succeeded', progress: { pagesDone: pages, pagesTotal: pages }, result } as const;
    const done = await store.transition(jobId, ['running'], finished, starts);
    if (done) await publish({ type: 'done', metrics });
    ended = done !== null;
  } catch (e) {
    await chain;
    ended = await endUnfinished(deps, jobId, signal, e, starts);
  }
  // Only now, with the job final, are its bytes no longer needed (a retry after an outage needs them); a run that
  // did not end the job leaves them to the one that does.
  if (ended) await blobs.delete(jobId).catch((e: unknown) => deps.report?.(e, jobId));
  return ended;
}

/** The result's reading, in the text formats the job asked for. */
function resultOf(
  doc: Awaited<ReturnType<typeof readDocument>>,
  formats: ReadonlySet<OutputFormat>,
): Omit<JobResult, 'metrics'> {
  return {
    format: doc.format,
    pageCount: doc.pageCount,
    pages: doc.pages,
    ...(formats.has('markdown') ? { markdown: doc.markdown } : {}),
    ...(formats.has('text') ? { text: doc.text } : {}),
    ...(formats.has('json') ? { document: { format: doc.format, pageCount: doc.pageCount, pages: doc.pages } } : {}),
  };
}

/** The word-level renderings the job asked for; the searchable PDF is stored apart, or the job says why it is not. */
async function renderFormats(
  deps: WorkerDeps,
  jobId: string,
  render: RenderInput,
  formats: ReadonlySet<OutputFormat>,
): Promise<{ rendered: Partial<Record<Exclude<WordFormat, 'pdf'>, string>>; pdf: JobResult['pdf'] }> {
  const rendered: Partial<Record<Exclude<WordFormat, 'pdf'>, string>> = {};
  let pdf: JobResult['pdf'];
  for (const f of ['hocr', 'alto', 'tsv'] as const) if (formats.has(f)) rendered[f] = renderTextFormat(f, render);
  if (formats.has('pdf')) {
    const out = await searchablePdf(render);
    try {
      await deps.blobs.put(searchablePdfKey(jobId), out);
      pdf = { bytes: out.length };
    } catch (e) {
      // The text results stand; only the PDF is missing, and the job says why.
      pdf = {
        error:
          e instanceof BlobTooLargeError
            ? `the searchable PDF is ${out.length} bytes, over this deployment's limit of ${e.limit}`
            : 'the searchable PDF could not be stored',
      };
      if (!(e instanceof BlobTooLargeError)) deps.report?.(e, jobId);
    }
  }
  return { rendered, pdf };
}

/**
 * A job that ended without a result: cancelled, or failed with a typed error (else INTERNAL, and reported).
 * True when this run (`starts`) ended it.
 */
async function endUnfinished(
  deps: WorkerDeps,
  jobId: string,
  signal: AbortSignal,
  e: unknown,
  starts: number,
): Promise<boolean> {
  const { store, events } = deps;
  if (signal.reason instanceof WorkerStopping || signal.reason instanceof LockLost) throw signal.reason;
  if (signal.aborted || (e instanceof EngineError && e.code === 'CANCELLED')) {
    if (!(await store.transition(jobId, ['running'], { status: 'cancelled' }, starts))) return false;
    await events.publish(jobId, { type: 'cancelled' }, starts);
  } else {
    const typed = e instanceof DocumentError || e instanceof EngineError;
    if (!typed) deps.report?.(e, jobId);
    const error: JobError = typed
      ? { code: e.code, message: e.message }
      : { code: 'INTERNAL', message: 'the job failed unexpectedly; it has been reported' };
    if (!(await store.transition(jobId, ['running'], { status: 'failed', error }, starts))) return false;
    await events.publish(jobId, { type: 'failed', ...error }, starts);
  }
  return true;
}
