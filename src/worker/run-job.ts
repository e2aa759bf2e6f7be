/**
 * A worker's handling of one job: take the bytes, read the document, stream token, region and page events
 * as they happen, store the result, and end with exactly one final event (done, failed or cancelled). A
 * failing job records a typed error; it never throws out of here, except to hand the job back: a backend outage
 * with tries left, or its worker stopping.
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
import type { EventLog } from '../jobs/events.js';
import { type JobRun, WorkerStopping } from '../jobs/queue.js';
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

export async function runJob(
  deps: WorkerDeps,
  jobId: string,
  signal: AbortSignal,
  run: JobRun = { attempt: 1 },
): Promise<void> {
  try {
    await readJob(deps, jobId, signal, run);
  } catch (e) {
    // The worker is stopping: the job stays RUNNING with its bytes, and the queue gives it to another worker.
    if (e instanceof WorkerStopping) throw e;
    // Not the document's fault and not decoding's: a backend broke (a store or log outage). With tries left,
    // the queue takes the job up again later (it stays RUNNING and its next worker takes it over); on the last
    // try it ends as INTERNAL.
    deps.report?.(e, jobId);
    if ((run.attemptsLeft ?? 0) > 0) throw e;
    const error: JobError = { code: 'INTERNAL', message: 'the job failed unexpectedly; it has been reported' };
    try {
      if (await deps.store.transition(jobId, ['queued', 'running'], { status: 'failed', error }))
        await deps.events.publish(jobId, { type: 'failed', ...error });
    } catch (e2) {
      deps.report?.(e2, jobId);
    }
  }
}

async function readJob(deps: WorkerDeps, jobId: string, signal: AbortSignal, run: JobRun): Promise<void> {
  const { store, events, blobs, engine } = deps;
  const job = await store.load(jobId);
  // Finished or cancelled while waiting: nothing to do. RUNNING means its last worker died (or a backend broke
  // under it): this worker takes it over and reads it again from the start.
  if (!job || (job.status !== 'queued' && job.status !== 'running')) return;
  const from = job.status;
  const bytes = await blobs.get(jobId);
  if (!bytes) {
    const error: JobError = { code: 'INPUT_LOST', message: 'the uploaded file is no longer stored' };
    if (await store.transition(jobId, [from], { status: 'failed', error }))
      await events.publish(jobId, { type: 'failed', ...error });
    return;
  }
  // Counted on the job itself: the queue's own count does not move when a dead worker's job is taken over.
  const starts = (job.starts ?? 0) + 1;
  if (
    !(await store.transition(jobId, [from], { status: 'running', progress: { pagesDone: 0, pagesTotal: 0 }, starts }))
  )
    return; // cancelled just now
  if (from === 'running') await events.publish(jobId, { type: 'restarted', attempt: starts });
  // Progress and events from inside decoding callbacks go out one after another, in the order they happened
  // (an async event log must not number a later event first); the final event waits for all of them.
  let chain: Promise<unknown> = Promise.resolve();
  const fire = (write: () => Promise<unknown>): void => {
    chain = chain.then(write).catch((e: unknown) => deps.report?.(e, jobId));
  };
  let pagesDone = 0;
  let pagesTotal = 0;
  // Resolved at submission; a job stored by an earlier version may lack some, which take their defaults here.
  const { fileName: _name, size: _size, source: _source, decoding, ...asked } = job.input;
  const reading = resolveReading(asked);
  const formats = formatsOf(reading);
  const limits = deps.limits ?? DEFAULT_SOURCE_LIMITS;
  try {
    const doc = await readDocument(engine, bytes, job.input.fileName, {
      ...reading,
      decoding,
      formulas: reading.formulas ? (deps.formulas ?? null) : null,
      ...(deps.limits ? { limits: deps.limits } : {}),
      signal,
      onOpen: (pages) => {
        pagesTotal = pages.length;
        fire(() => store.update(jobId, { progress: { pagesDone, pagesTotal } }));
      },
      onTokens: (page, line, text, fromDraft, drafted) =>
        fire(() => events.publish(jobId, { type: 'token', page, line, text, fromDraft: [...fromDraft], drafted })),
      onPage: (page, ms) => {
        deps.onPageRead?.(ms);
        pagesDone++;
        page.blocks.forEach((b) =>
          fire(() => events.publish(jobId, { type: 'region', page: page.index, block: b.order, markdown: b.markdown })),
        );
        fire(() => events.publish(jobId, { type: 'page', page: page.index, markdown: page.markdown }));
        fire(() => store.update(jobId, { progress: { pagesDone, pagesTotal } }));
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
    const done = await store.transition(jobId, ['running'], {
      status: 'succeeded',
      progress: { pagesDone: doc.pages.length, pagesTotal: doc.pages.length },
      result: {
        format: doc.format,
        pageCount: doc.pageCount,
        pages: doc.pages,
        ...(formats.has('markdown') ? { markdown: doc.markdown } : {}),
        ...(formats.has('text') ? { text: doc.text } : {}),
        ...(formats.has('json')
          ? { document: { format: doc.format, pageCount: doc.pageCount, pages: doc.pages } }
          : {}),
        ...rendered,
        ...(pdf ? { pdf } : {}),
        metrics,
      },
    });
    if (done) await events.publish(jobId, { type: 'done', metrics });
  } catch (e) {
    await chain;
    await endUnfinished(deps, jobId, signal, e);
  }
  // Only now, with the job final, are its bytes no longer needed (a retry after an outage needs them).
  await blobs.delete(jobId).catch((e: unknown) => deps.report?.(e, jobId));
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

/** A job that ended without a result: cancelled, or failed with a typed error (else INTERNAL, and reported). */
async function endUnfinished(deps: WorkerDeps, jobId: string, signal: AbortSignal, e: unknown): Promise<void> {
  const { store, events } = deps;
  if (signal.reason instanceof WorkerStopping) throw signal.reason;
  if (signal.aborted || (e instanceof EngineError && e.code === 'CANCELLED')) {
    if (await store.transition(jobId, ['running'], { status: 'cancelled' }))
      await events.publish(jobId, { type: 'cancelled' });
  } else {
    const typed = e instanceof DocumentError || e instanceof EngineError;
    if (!typed) deps.report?.(e, jobId);
    const error: JobError = typed
      ? { code: e.code, message: e.message }
      : { code: 'INTERNAL', message: 'the job failed unexpectedly; it has been reported' };
    if (await store.transition(jobId, ['running'], { status: 'failed', error }))
      await events.publish(jobId, { type: 'failed', ...error });
  }
}
