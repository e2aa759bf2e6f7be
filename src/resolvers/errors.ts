/**
 * Errors a client can act on: a GraphQL error with a stable `extensions.code` (and, where it helps, the valid
 * choices). Anything else thrown in a resolver is masked by the server and reported.
 */
import { GraphQLError } from 'graphql';

export const API_ERROR_CODES = [
  'UNAUTHENTICATED',
  'CSRF_HEADER_REQUIRED',
  'BAD_USER_INPUT',
  'INVALID_DECODING',
  'UPLOAD_TOO_LARGE',
  'EMPTY_INPUT',
  'UNSUPPORTED_FORMAT',
  'INVALID_PAGE_RANGE',
  'TOO_MANY_PAGES',
  'TOO_MANY_JOBS',
  'URL_INPUT_DISABLED',
  'URL_REFUSED',
  'URL_FETCH_FAILED',
  'NOT_FOUND',
  'QUERY_TOO_COMPLEX',
  'QUERY_TOO_DEEP',
  'STORE_UNAVAILABLE',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export function apiError(code: ApiErrorCode, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

/** A job this tenant does not have (another tenant's job is reported the same way: it does not exist here). */
export class NotFoundError extends Error {
  readonly code = 'NOT_FOUND';
  override name = 'NotFoundError';

  constructor(readonly id: string) {
    super(`no parse job with id "${id}"`);
  }
}
