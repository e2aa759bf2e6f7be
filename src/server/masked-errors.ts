/**
 * Yoga's error masking: a store outage and an oversize body get their own codes, our typed errors pass through,
 * and anything unexpected is reported and answered as INTERNAL.
 */
import { GraphQLError } from 'graphql';
import type { Logger } from './logger.js';
import type { Reporter } from './sentry.js';

/**
 * Yoga's own ways of saying a body is too big, whichever part noticed: its body-size limit, the multipart
 * parser's file limit, or a streamed multipart body cut off by the size limit mid-part.
 */
function tooLarge(error: unknown): boolean {
  if (!(error instanceof GraphQLError)) return false;
  const code = error.extensions?.code;
  return code === 'REQUEST_ENTITY_TOO_LARGE' || (code === 'BAD_REQUEST' && /too large|size limit/i.test(error.message));
}

/** ioredis's ways of saying Redis is not there (an API process fails fast: see jobs/redis-connection.ts). */
function storeDown(error: unknown): boolean {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (!(original instanceof Error)) return false;
  return (
    original.name === 'MaxRetriesPerRequestError' ||
    /enableOfflineQueue|Command timed out|Connection is closed|Stream isn't writeable|ECONNREFUSED/.test(
      original.message,
    )
  );
}

/** The maskError for yoga's maskedErrors option; limits.uploadBytes is the limit an oversize body is told of. */
export function maskError(
  logger: Logger,
  report: Reporter,
  limits: { uploadBytes: number },
): (error: unknown, message: string) => Error {
  return (error, message) => {
    if (storeDown(error)) {
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'a request needed the job store and it did not answer',
      );
      return new GraphQLError('the job store (Redis) is not answering; try again shortly', {
        extensions: { code: 'STORE_UNAVAILABLE', http: { status: 503 } },
      });
    }
    if (tooLarge(error)) {
      return new GraphQLError(`the request is over the limit: documents are limited to ${limits.uploadBytes} bytes`, {
        extensions: { code: 'UPLOAD_TOO_LARGE', limit: limits.uploadBytes, http: { status: 413 } },
      });
    }
    const original = error instanceof GraphQLError ? error.originalError : error;
    // Ours (typed, with a code), GraphQL's own validation errors, and the guards' errors pass through.
    if (error instanceof GraphQLError && (!original || original instanceof GraphQLError)) return error;
    const path = error instanceof GraphQLError && error.path ? error.path.join('.') : '';
    report(original ?? error, path ? { path } : {});
    return new GraphQLError(message, { extensions: { code: 'INTERNAL' } });
  };
}
