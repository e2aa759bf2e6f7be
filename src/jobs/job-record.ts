/** A parse job as the API and the workers see it: what was asked, where it stands, what came out. */
import type { ReadingOptions } from '../options/reading-options.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const FINISHED: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

/** Where a job's searchable PDF is kept (the blob store, beside its input, for as long as the job). */
export const searchablePdfKey = (jobId: string): string => `${jobId}-searchable-pdf`;

/**
 * What was asked: the document, the reading options as resolved at submission (a job stored by an earlier version
 * may lack some: resolveReading fills them), and the decoding options, which only the engine reads.
 */
export interface JobInput extends Partial<ReadingOptions> {
  fileName: string;
  size: number;
  /** How the bytes arrived. */
  source?: 'upload' | 'base64' | 'url';
  /** Resolved against the served bundle when the job was submitted (earlier versions stored them as sent). */
  decoding?: object;
}

export interface JobProgress {
  pagesDone: number;
  pagesTotal: number;
}

/** Why a job can fail on our side; the worker adds the document's and the engine's own codes. */
export const SERVICE_ERROR_CODES = ['INPUT_LOST', 'INTERNAL'] as const;

export interface JobError {
  /** Stable code a client can branch on (schema/errors.ts lists them all). */
  code: string;
  message: string;
}

/** What came out; the pages are the worker's page tree (PageOut), which the store keeps as data. */
export interface JobResult<Page = unknown> {
  format: string;
  pageCount: number;
  /** Pages → blocks → lines, always kept (the API's structured view). */
  pages: readonly Page[];
  /** The whole document, in the formats the job asked for. */
  markdown?: string;
  text?: string;
  document?: unknown;
  hocr?: string;
  alto?: string;
  tsv?: string;
  /** The searchable PDF, kept in the blob store (searchablePdfKey): its size, or why it could not be kept. */
  pdf?: { bytes: number } | { error: string };
  /** Speculation metrics of the whole job. */
  metrics: Record<string, unknown>;
}

export interface JobRecord<Page = unknown> {
  id: string;
  tenant: string;
  status: JobStatus;
  createdAt: string;
  updatedAt: string;
  input: JobInput;
  progress: JobProgress;
  result?: JobResult<Page>;
  error?: JobError;
  /** Times a worker has started reading it (more than one after a worker died or a backend broke under it). */
  starts?: number;
}

/** A job as it is first stored: queued, nothing read yet. */
export function newJobRecord(tenant: string, input: JobInput, id: string): JobRecord {
  const now = new Date().toISOString();
  return {
    id,
    tenant,
    status: 'queued',
    createdAt: now,
    updatedAt: now,
    input,
    progress: { pagesDone: 0, pagesTotal: 0 },
  };
}
