/** A parse job as the API and the workers see it: what was asked, where it stands, what came out. */
import type { DecodingOptionsInput } from '../engine/options.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const FINISHED: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

/** What a job's result keeps: the page tree is always kept; these say which whole-document renderings. */
export type OutputFormat = 'markdown' | 'text' | 'json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['markdown', 'text', 'json'];

export interface JobInput {
  fileName: string;
  size: number;
  /** How the bytes arrived. */
  source?: 'upload' | 'base64' | 'url';
  pages?: string;
  formats?: OutputFormat[];
  decoding?: DecodingOptionsInput;
  dropHeadersFooters?: boolean;
}

export interface JobProgress {
  pagesDone: number;
  pagesTotal: number;
}

export interface JobError {
  /** Stable code a client can branch on (a DocumentError or EngineError code, or INTERNAL). */
  code: string;
  message: string;
}

export interface BoxResult {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LineResult {
  box: BoxResult;
  text: string;
  confidence?: number;
}

export interface BlockResult {
  type: string;
  box: BoxResult;
  order: number;
  level?: number;
  markdown: string;
  confidence: number | null;
  lines: LineResult[];
  cells?: string[][];
}

export interface PageResult {
  index: number;
  width: number;
  height: number;
  /** Clockwise degrees the page was turned to read it upright (absent in results stored before it was reported). */
  rotation?: number;
  markdown: string;
  blocks: BlockResult[];
}

export interface JobResult {
  format: string;
  pageCount: number;
  /** Pages → blocks → lines, always kept (the API's structured view). */
  pages: PageResult[];
  /** The whole document, in the formats the job asked for. */
  markdown?: string;
  text?: string;
  document?: unknown;
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
