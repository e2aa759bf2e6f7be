/** A parse job as the API and the workers see it: what was asked, where it stands, what came out. */
import type { DecodingOptionsInput } from '../engine/options.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const FINISHED: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface JobInput {
  fileName: string;
  size: number;
  pages?: string;
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

export interface JobRecord {
  id: string;
  tenant: string;
  status: JobStatus;
  createdAt: string;
  updatedAt: string;
  input: JobInput;
  progress: JobProgress;
  /** The document as markdown and as the JSON block tree, with the speculation metrics. */
  result?: { markdown: string; document: unknown; metrics: Record<string, unknown> };
  error?: JobError;
}
