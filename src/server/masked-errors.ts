/**
 * Yoga's error masking: a store outage and an oversize body get their own codes, our typed errors pass through,
 * and anything unexpected is reported and answered as INTERNAL. Every error that reaches a client has what it
 * echoes of the input cut short, and a variable's refusal is coded BAD_USER_INPUT.
 */
import { GraphQLError, Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
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

type YogaLogger = Record<'debug' | 'info' | 'warn' | 'error', (...args: unknown[]) => void>;

/**
 * The logger yoga writes with. Yoga logs at error, with its stack, every error its masking replaced; a body over
 * the upload limit is the client's doing, so it goes down once as a warning, without a stack.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  const refused = new WeakSet<object>(); // yoga logs a masked error twice (masking, then handling)
  const call =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void =>
      (logger[level] as (...a: unknown[]) => void).apply(logger, args);
  return {
    debug: call('debug'),
    info: call('info'),
    warn: call('warn'),
    error: (...args: unknown[]) => {
      const [error] = args;
      if (!tooLarge(error)) return call('error')(...args);
      if (refused.has(error as object)) return;
      refused.add(error as object);
      logger.warn(
        { code: 'UPLOAD_TOO_LARGE', reason: (error as Error).message },
        'refused a request over the upload limit',
      );
    },
  };
}

/** An echoed value longer than this is cut to it: a refusal of a 25 MB document need not send the document back. */
const ECHO_CHARS = 100;
const LONG_WORD = new RegExp(`\\S{${ECHO_CHARS + 1},}`, 'g');

const cut = (value: string): string => (value.length > ECHO_CHARS ? `${value.slice(0, ECHO_CHARS)}…` : value);

/** The message with each quoted value, and any other unbroken run of characters, cut to ECHO_CHARS. */
export function shortenEchoes(message: string): string {
  if (message.length <= ECHO_CHARS) return message;
  let out = '';
  let i = 0;
  while (i < message.length) {
    const open = message.indexOf('"', i);
    out += message.slice(i, open < 0 ? message.length : open).replace(LONG_WORD, cut);
    if (open < 0) break;
    let close = open + 1;
    while (close < message.length && message[close] !== '"') close += message[close] === '\\' ? 2 : 1;
    out += `"${cut(message.slice(open + 1, Math.min(close, message.length)))}"`;
    i = close + 1;
  }
  return out;
}

/**
 * A GraphQL error made fit for a client, in place (a new error would be logged as a masked one): echoed values cut
 * short, and a variable the executor could not coerce (the error points at its definition, with no code) coded
 * BAD_USER_INPUT.
 */
export function clientError(error: GraphQLError): GraphQLError {
  error.message = shortenEchoes(error.message);
  if (error.extensions.code === undefined && error.nodes?.[0]?.kind === Kind.VARIABLE_DEFINITION) {
    (error.extensions as Record<string, unknown>).code = 'BAD_USER_INPUT';
  }
  return error;
}

/** Validation errors reach a client without passing maskError (over HTTP and WebSockets alike): tidied here. */
export const clientValidationErrors: Plugin = {
  onValidate() {
    return ({ result }) => {
      for (const error of result) if (error instanceof GraphQLError) clientError(error);
    };
  },
};

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
    if (error instanceof GraphQLError && (!original || original instanceof GraphQLError)) return clientError(error);
    const path = error instanceof GraphQLError && error.path ? error.path.join('.') : '';
    report(original ?? error, path ? { path } : {});
    return new GraphQLError(message, { extensions: { code: 'INTERNAL' } });
  };
}
