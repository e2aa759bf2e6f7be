/**
 * Every stable error code, as one enum (a failed job's code, a typed error's, and `extensions.code` on a GraphQL
 * error), and the typed errors a field can answer with (a union member the client can branch on).
 */
import { DOCUMENT_ERROR_CODES } from '../src/document/errors.js';
import { ENGINE_ERROR_CODES } from '../src/engine/errors.js';
import { SERVICE_ERROR_CODES } from '../src/jobs/job-record.js';
import { API_ERROR_CODES, type ApiErrorCode, NotFoundError } from '../src/resolvers/errors.js';
import { builder, type SchemaTypes } from './builder.js';

/** Why a job can fail: the document's fault, the engine's, or ours. */
export const JOB_ERROR_CODES = [...DOCUMENT_ERROR_CODES, ...ENGINE_ERROR_CODES, ...SERVICE_ERROR_CODES] as const;
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];
/** A stored job's code as the enum has it (a code this version does not know reads as INTERNAL). */
export const jobErrorCode = (code: string): JobErrorCode =>
  (JOB_ERROR_CODES as readonly string[]).includes(code) ? (code as JobErrorCode) : 'INTERNAL';

const origin = (code: string): string =>
  (DOCUMENT_ERROR_CODES as readonly string[]).includes(code)
    ? 'The document: it cannot be read as sent.'
    : (ENGINE_ERROR_CODES as readonly string[]).includes(code)
      ? 'The engine refused or stopped the read.'
      : (API_ERROR_CODES as readonly string[]).includes(code)
        ? 'The request (GraphQL `extensions.code`).'
        : "The service: not the document's fault (a lost upload, an unexpected failure, reported).";

export const ErrorCode = builder.enumType('ErrorCode', {
  description:
    'Stable error codes: branch on these, never on messages. A failed job ' +
    'carries a document, engine or service code; a refused request carries ' +
    'a request code in `extensions.code`.',
  values: Object.fromEntries(
    [...new Set([...JOB_ERROR_CODES, ...API_ERROR_CODES])].map((c) => [c, { value: c, description: origin(c) }]),
  ),
});

export const ErrorInterface = builder.interfaceRef<Error & { code: ApiErrorCode | JobErrorCode }>('Error').implement({
  description: 'Something the client can act on; `code` is stable.',
  fields: (t) => ({
    message: t.exposeString('message', {
      description: 'What went wrong, in words for people; branch on code, not on this.',
    }),
    code: t.field({ type: ErrorCode, description: 'Stable code to branch on.', resolve: (e) => e.code }),
  }),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  description: "No such job for this tenant (another tenant's job does not exist here either).",
  interfaces: [ErrorInterface],
  isTypeOf: (o) => o instanceof NotFoundError,
  fields: (t) => ({ id: t.exposeID('id', { description: 'The job id that was asked for.' }) }),
});

/** A failed job's code and message, as the JobError object and the JobFailed event both give them. */
export function jobErrorFields<P extends { code: string; message: string }>(
  t: PothosSchemaTypes.ObjectFieldBuilder<SchemaTypes, P>,
) {
  return {
    code: t.field({
      type: ErrorCode,
      description: 'Why the job failed: a document, engine or service code.',
      resolve: (e) => jobErrorCode(e.code),
    }),
    message: t.string({
      description: 'What went wrong, in words for people; branch on code, not on this.',
      resolve: (e) => e.message,
    }),
  };
}
