/** A parse job as the API and the workers see it: what was asked, where it stands, what came out. */
import type { PageOut } from '../document/assemble.js';
import type { WordFormat } from '../document/formats/index.js';
import { DOCUMENT_ERROR_CODES } from '../document/errors.js';
import { ENGINE_ERROR_CODES } from '../engine/errors.js';
import type { DecodingOptions, DecodingOptionsInput } from '../engine/strategies/options.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const FINISHED: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

/**
 * What a job's result keeps: the page tree is always kept; these say which whole-document renderings. The
 * word-level ones (hOCR, ALTO, TSV, a searchable PDF) cost word boxes, so only a job that asks gets them.
 */
export type OutputFormat = 'markdown' | 'text' | 'json' | WordFormat;
/** The renderings a job keeps when it names none. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['markdown', 'text', 'json'];

/** Where a job's searchable PDF is kept (the blob store, beside its input, for as long as the job). */
export const searchablePdfKey = (jobId: string): string => `${jobId}-searchable-pdf`;

export interface JobInput {
  fileName: string;
  size: number;
  /** How the bytes arrived. */
  source?: 'upload' | 'base64' | 'url';
  pages?: string;
  formats?: OutputFormat[];
  /** Resolved when the job was submitted (a job stored by an earlier version may hold them as sent). */
  decoding?: DecodingOptions | DecodingOptionsInput;
  dropHeadersFooters?: boolean;
  /** false: decode every line, even on a page the script gate finds in a script the model lacks (default true). */
  scriptGate?: boolean;
  /** false: read a PDF's pages by the model alone, its text layer unused (default true: worker/text-layer.ts). */
  textLayer?: boolean;
  /** false: read every line as text, formulas included (default true: display formulas as LaTeX). */
  formulas?: boolean;
  /** Word boxes on every line of the page tree (they come with the word-level formats anyway). */
  words?: boolean;
  /** Character boxes within each word too (implies words). */
  chars?: boolean;
}

export interface JobProgress {
  pagesDone: number;
  pagesTotal: number;
}

/** Why a job can fail: the document's fault, the engine's, or ours (INPUT_LOST, INTERNAL). */
export const JOB_ERROR_CODES = [...DOCUMENT_ERROR_CODES, ...ENGINE_ERROR_CODES, 'INPUT_LOST', 'INTERNAL'] as const;
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];

export interface JobError {
  /** Stable code a client can branch on. */
  code: JobErrorCode;
  message: string;
}

export interface JobResult {
  format: string;
  pageCount: number;
  /** Pages → blocks → lines, always kept (the API's structured view). */
  pages: PageOut[];
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

export interface JobRecord {
  id: string;
  tenant: string;
  status: JobStatus;
  createdAt: string;
  updatedAt: string;
  input: JobInput;
  progress: JobProgress;
  result?: JobResult;
  error?: JobError;
  /** Times a worker has started reading it (more than one after a worker died or a backend broke under it). */
  starts?: number;
}
