/** A parse job, and the root fields that create, read, list and cancel jobs. */
import type { DecodingOptions } from '../src/engine/strategies/options.js';
import type { PageOut } from '../src/document/assemble.js';
import type { JobRecord, JobResult } from '../src/jobs/job-record.js';
import { DEFAULT_FORMATS, OUTPUT_FORMATS, type OutputFormat, READING_OPTIONS } from '../src/options/reading-options.js';
import { searchablePdfPath } from '../src/resolvers/downloads.js';
import { cancelParseJob } from '../src/resolvers/cancel-parse-job.js';
import { createParseJob } from '../src/resolvers/create-parse-job.js';
import { NotFoundError } from '../src/resolvers/errors.js';
import { listParseJobs, loadParseJobs, MAX_PAGE_SIZE } from '../src/resolvers/parse-jobs.js';
import { builder, type SchemaTypes } from './builder.js';
import { DecodingInput, DrafterEnum, VerifierEnum } from './decoding.js';
import { ErrorInterface, jobErrorFields } from './errors.js';
import { SpeculationMetrics } from './metrics.js';
import { Page } from './page.js';

export const JobStatus = builder.enumType('JobStatus', {
  description: 'Where a job stands: waiting, being read, or finished one of three ways.',
  values: {
    QUEUED: { value: 'queued' },
    RUNNING: { value: 'running' },
    SUCCEEDED: { value: 'succeeded' },
    FAILED: { value: 'failed' },
    CANCELLED: { value: 'cancelled' },
  } as const,
});

export const OutputFormatEnum = builder.enumType('OutputFormat', {
  description:
    'A whole-document rendering a job keeps. The word-level ones (HOCR, ALTO, TSV, SEARCHABLE_PDF) come ' +
    'with word boxes, which cost an alignment per line: a job has them only when it asks.',
  values: Object.fromEntries(
    Object.entries(OUTPUT_FORMATS).map(([value, f]) => [
      f.api,
      { value: value as OutputFormat, description: f.description },
    ]),
  ),
});

const SearchablePdf = builder.objectRef<NonNullable<JobResult['pdf']> & { jobId: string }>('SearchablePdf').implement({
  description: "The job's searchable PDF, kept as long as the job is.",
  fields: (t) => ({
    url: t.string({
      nullable: true,
      description:
        'Where to GET it, with the same Authorization as this request; null when it could not be kept (see error).',
      resolve: (p) => ('bytes' in p ? searchablePdfPath(p.jobId) : null),
    }),
    bytes: t.int({
      nullable: true,
      description: 'Its size in bytes.',
      resolve: (p) => ('bytes' in p ? p.bytes : null),
    }),
    error: t.string({
      nullable: true,
      description: 'Why it could not be kept (the text formats stand); null when it was.',
      resolve: (p) => ('error' in p ? p.error : null),
    }),
  }),
});

const JobProgress = builder.objectRef<JobRecord['progress']>('JobProgress').implement({
  description: 'How far a job has read its document, in pages.',
  fields: (t) => ({
    pagesDone: t.exposeInt('pagesDone', { description: 'Pages read so far.' }),
    pagesTotal: t.exposeInt('pagesTotal', { description: '0 until the document is open.' }),
    fraction: t.float({
      description: 'pagesDone / pagesTotal, from 0 to 1 (0 until the document is open).',
      resolve: (p) => (p.pagesTotal ? p.pagesDone / p.pagesTotal : 0),
    }),
  }),
});

const JobError = builder.objectRef<NonNullable<JobRecord['error']>>('JobError').implement({
  description: 'Why a job failed; `code` is stable (a document, engine or service code).',
  fields: (t) => jobErrorFields(t),
});

const JobDecoding = builder.objectRef<DecodingOptions>('JobDecoding').implement({
  description: 'The decoding options the job is read with: resolved when it was submitted, defaults filled in.',
  fields: (t) => ({
    drafter: t.field({
      type: DrafterEnum,
      description: 'The drafter the job is read with.',
      resolve: (d) => d.drafter,
    }),
    verifier: t.field({
      type: VerifierEnum,
      description: 'The verifier the job is read with.',
      resolve: (d) => d.verifier,
    }),
    draftLength: t.int({
      nullable: true,
      description: 'Null = automatic.',
      resolve: (d) => (typeof d.draftLength === 'number' ? d.draftLength : null),
    }),
    visualKeep: t.float({
      description: 'Share of visual tokens each step attends to (1 = all).',
      resolve: (d) => d.visualTokens.keep,
    }),
    parameters: t.field({
      type: 'JSON',
      description: "Every parameterised strategy's parameters, by strategy name (only the chosen ones are used).",
      resolve: (d) => d.params,
    }),
  }),
});

/** A job's page tree: the store keeps it as data, and the worker wrote it as PageOut (worker/run-job.ts). */
const pagesOf = (j: JobRecord): readonly PageOut[] => (j.result?.pages ?? []) as readonly PageOut[];

export const ParseJob = builder.loadableObjectRef<JobRecord, string>('ParseJob', {
  // A job this tenant lacks loads as null (the field is nullable), not as an error: it simply is not there.
  load: async (ids, ctx) => (await loadParseJobs(ids, ctx, ctx.tenant ?? '')) as JobRecord[],
  // Jobs change while a request runs (subscriptions): cache within one request only.
  cacheResolved: (job) => job.id,
});

type JobFields = PothosSchemaTypes.ObjectFieldBuilder<SchemaTypes, JobRecord>;

/** Who the job is and where it stands: its id, status and times. */
function jobStateFields(t: JobFields) {
  return {
    id: t.exposeID('id', { description: "The job's id." }),
    status: t.field({
      type: JobStatus,
      description: 'Where the job is: queued, running, or how it ended.',
      resolve: (j) => j.status,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the job was submitted.', resolve: (j) => j.createdAt }),
    updatedAt: t.field({
      type: 'DateTime',
      description: 'When the job last changed (status or progress).',
      resolve: (j) => j.updatedAt,
    }),
  };
}

/** What was asked for: the document as sent and the options it is read with. */
function jobRequestFields(t: JobFields) {
  return {
    fileName: t.string({
      description: 'The name sent with the job, else one taken from the upload or the URL ("document" for base64).',
      resolve: (j) => j.input.fileName,
    }),
    size: t.int({ description: 'Bytes of the input document.', resolve: (j) => j.input.size }),
    pageRange: t.string({
      nullable: true,
      description: 'The pages asked for, 0-based, as sent ("0,2-4"); null when all were.',
      resolve: (j) => j.input.pages ?? null,
    }),
    formats: t.field({
      type: [OutputFormatEnum],
      description: 'Whole-document renderings kept (MARKDOWN, TEXT and JSON when none were asked for).',
      resolve: (j) => [...(j.input.formats ?? DEFAULT_FORMATS)],
    }),
    decoding: t.field({
      type: JobDecoding,
      nullable: true,
      description: 'Null only for a job stored by an earlier version whose options the served bundle refuses.',
      // A job's own resolved options come back as they are; an earlier version stored them as sent.
      resolve: (j, _args, ctx) => ctx.engine.resolveDecoding(j.input.decoding).options ?? null,
    }),
  };
}

/** How far the reading got: progress, the failure if any, and the pages read. */
function jobProgressFields(t: JobFields) {
  return {
    progress: t.field({
      type: JobProgress,
      description: 'Pages read so far, of those to read.',
      resolve: (j) => j.progress,
    }),
    error: t.field({
      type: JobError,
      nullable: true,
      description: 'Why the job failed; null unless it failed.',
      resolve: (j) => j.error ?? null,
    }),
    pageCount: t.int({
      nullable: true,
      description: 'Pages in the document (not only those read).',
      resolve: (j) => j.result?.pageCount ?? null,
    }),
    pages: t.field({ type: [Page], description: 'Empty until the job succeeds.', resolve: (j) => pagesOf(j) }),
    unreadableLines: t.int({
      nullable: true,
      description: 'Lines marked unreadable over all pages read (Line.unreadable); null until the job succeeds.',
      resolve: (j) => (j.result ? pagesOf(j).reduce((n, p) => n + (p.unreadableLines ?? 0), 0) : null),
    }),
  };
}

/** The job's renderings and metrics, each null until it succeeds (or when it was not asked for). */
function jobResultFields(t: JobFields) {
  return {
    markdown: t.string({
      nullable: true,
      description: 'Null until the job succeeds, or when MARKDOWN was not asked for.',
      resolve: (j) => j.result?.markdown ?? null,
    }),
    text: t.string({
      nullable: true,
      description:
        'Plain text, blocks separated by blank lines; null until the job succeeds, or when TEXT was not asked for.',
      resolve: (j) => j.result?.text ?? null,
    }),
    document: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The block tree as JSON, when JSON was asked for.',
      resolve: (j) => j.result?.document ?? null,
    }),
    hocr: t.string({
      nullable: true,
      description: 'hOCR 1.2, when HOCR was asked for; null until the job succeeds.',
      resolve: (j) => j.result?.hocr ?? null,
    }),
    alto: t.string({
      nullable: true,
      description: 'ALTO 4 XML, when ALTO was asked for; null until the job succeeds.',
      resolve: (j) => j.result?.alto ?? null,
    }),
    tsv: t.string({
      nullable: true,
      description: 'Tesseract-style TSV, when TSV was asked for; null until the job succeeds.',
      resolve: (j) => j.result?.tsv ?? null,
    }),
    searchablePdf: t.field({
      type: SearchablePdf,
      nullable: true,
      description: 'The searchable PDF, when SEARCHABLE_PDF was asked for; null until the job succeeds.',
      resolve: (j) => (j.result?.pdf ? { ...j.result.pdf, jobId: j.id } : null),
    }),
    metrics: t.field({
      type: SpeculationMetrics,
      nullable: true,
      description: 'How the job was decoded; null until it succeeds.',
      resolve: (j) => j.result?.metrics ?? null,
    }),
  };
}

ParseJob.implement({
  description: 'A document submitted for parsing: its status and progress, then its pages and renderings.',
  fields: (t) => ({
    ...jobStateFields(t),
    ...jobRequestFields(t),
    ...jobProgressFields(t),
    ...jobResultFields(t),
  }),
});

type InputFields = PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>;

/** The reading options as input fields, each as its table declares it (options/reading-options.ts). */
function readingFields(t: InputFields) {
  return Object.fromEntries(
    Object.entries(READING_OPTIONS).map(([key, spec]) => {
      if (spec.kind === 'formats')
        return [key, t.field({ type: [OutputFormatEnum], required: false, description: spec.description })];
      if (spec.kind === 'text')
        return [
          key,
          t.string({ required: false, description: spec.description, validate: { maxLength: spec.maxLength } }),
        ];
      return ['api' in spec ? spec.api : key, t.boolean({ required: false, description: spec.description })];
    }),
  );
}

const CreateParseJobInput = builder.inputType('CreateParseJobInput', {
  description:
    'The document comes exactly one way: file (multipart upload), base64, or url (when the server allows it).',
  fields: (t) => ({
    file: t.field({ type: 'File', required: false, description: 'The document as a multipart upload.' }),
    base64: t.string({
      required: false,
      description: "The document's bytes as base64 (a data: URL prefix is allowed).",
    }),
    url: t.string({
      required: false,
      description: 'https only, public addresses only; off unless the server sets SPECULA_URL_INPUT=1.',
      validate: { maxLength: 2048 },
    }),
    fileName: t.string({
      required: false,
      description: 'A name for the document; by default the upload\'s or the URL\'s own ("document" for base64).',
      validate: { maxLength: 255 },
    }),
    ...readingFields(t),
    decoding: t.field({
      type: DecodingInput,
      required: false,
      description: "How to decode; the served bundle's defaults fill what is absent.",
    }),
    idempotencyKey: t.string({
      required: false,
      description:
        'Any string of yours (a UUID): a retry with the same key (after a ' +
        'timeout, or STORE_UNAVAILABLE) returns the job the key first made ' +
        'instead of making another. Kept as long as finished jobs are.',
      validate: { minLength: 1, maxLength: 200 },
    }),
  }),
});

builder.queryFields((t) => ({
  parseJob: t.withAuth({ tenant: true }).field({
    type: ParseJob,
    nullable: true,
    description: 'One of your jobs; null when you have no job with this id.',
    args: { id: t.arg.id({ required: true, description: 'The id createParseJob returned.' }) },
    resolve: (_root, args) => String(args.id),
  }),
  parseJobs: t.withAuth({ tenant: true }).connection(
    {
      type: ParseJob,
      description:
        'Your jobs, newest first: `first`/`after` page towards older jobs, `last`/`before` towards newer ones.',
      complexity: (args) => ({
        field: 1,
        multiplier: Math.min(Math.max(args.first ?? args.last ?? 20, 1), MAX_PAGE_SIZE),
      }),
      resolve: async (_root, args, ctx) => {
        const page = await listParseJobs(ctx, args);
        return {
          edges: page.jobs.map((job) => ({ cursor: job.id, node: job })),
          pageInfo: {
            hasNextPage: page.hasNextPage,
            hasPreviousPage: page.hasPreviousPage,
            startCursor: page.jobs[0]?.id ?? null,
            endCursor: page.jobs.at(-1)?.id ?? null,
          },
        };
      },
    },
    {
      name: 'ParseJobConnection',
      description: 'A page of your jobs, newest first, and where it lies in the whole list.',
      // the page size is counted once, on parseJobs
      edgesField: { description: 'The jobs on this page, newest first.', complexity: { field: 1, multiplier: 1 } },
    },
    {
      name: 'ParseJobEdge',
      description: 'One job in a page of jobs, with its cursor.',
      nodeField: { description: 'The job.' },
    },
  ),
}));

builder.mutationFields((t) => ({
  createParseJob: t.withAuth({ tenant: true }).field({
    type: ParseJob,
    description: 'Queue a document for parsing; follow it with parseJobEvents or poll parseJob.',
    args: {
      input: t.arg({ type: CreateParseJobInput, required: true, description: 'The document and how to read it.' }),
    },
    resolve: (_root, { input }, ctx) => createParseJob(input, ctx),
  }),
  cancelParseJob: t.withAuth({ tenant: true }).field({
    type: ParseJob,
    description:
      'Stop a job: a waiting one at once, a running one within a decoder step. Finished jobs are returned as they are.',
    errors: {
      types: [NotFoundError],
      directResult: true,
      union: {
        name: 'CancelParseJobResult',
        description: 'The cancelled (or already finished) job, or NotFoundError.',
      },
    },
    args: { id: t.arg.id({ required: true, description: 'The id of the job to stop.' }) },
    resolve: (_root, args, ctx) => cancelParseJob(String(args.id), ctx),
  }),
}));

export { ErrorInterface };
