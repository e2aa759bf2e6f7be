/**
 * Error reporting. With SENTRY_DSN set, unexpected errors go to Sentry with what identifies them (job id,
 * operation); without it they are logged. Errors the client caused (typed codes) are never reported.
 */
import { setSpanRunner } from '../../schema/spans.js';
import type { Logger } from './logger.js';

export type Reporter = (error: unknown, extra?: Record<string, string>) => void;

/**
 * The part of @sentry/node used here. Declared, not imported as a type: @sentry/node is an optional dependency
 * (92 MB installed), and a build must compile where it was left out (`npm uninstall --no-save @sentry/node`, or a
 * registry hiccup that makes npm skip an optional package). The API test reports to a real ingest endpoint through it.
 */
interface SentryApi {
  init(options: {
    dsn: string;
    tracesSampleRate: number;
    dataCollection: { httpBodies: string[]; userInfo: boolean; cookies: boolean };
  }): unknown;
  startSpan<T>(context: { name: string; op: string }, run: () => T): T;
  withScope(run: (scope: { setTag(key: string, value: string): unknown }) => void): void;
  captureException(error: unknown): unknown;
  getClient(): unknown;
  flush(timeoutMs: number): PromiseLike<boolean>;
}

// A variable, so that the compiler does not resolve the package at build time.
const SENTRY_PACKAGE = '@sentry/node';

/** @sentry/node, once a DSN turned it on: imported only then (it takes about half a second to load). */
let sentry: SentryApi | null = null;

export async function createReporter(dsn: string | undefined, logger: Logger): Promise<Reporter> {
  if (dsn) {
    try {
      sentry ??= (await import(SENTRY_PACKAGE)) as SentryApi;
    } catch (e) {
      throw new Error(
        `SENTRY_DSN is set but @sentry/node cannot be loaded (removed after the install?): ${(e as Error).message}`,
      );
    }
    const Sentry = sentry;
    // No request bodies (documents, reference text) and no user data leave with an event.
    Sentry.init({ dsn, tracesSampleRate: 0.1, dataCollection: { httpBodies: [], userInfo: false, cookies: false } });
    setSpanRunner((name, run) => Sentry.startSpan({ name, op: 'graphql.resolve' }, run));
    logger.info('errors are reported to Sentry');
  }
  return (error, extra = {}) => {
    logger.error({ err: error, ...extra }, 'unexpected error');
    if (!dsn || !sentry) return;
    sentry.withScope((scope) => {
      for (const [k, v] of Object.entries(extra)) scope.setTag(k, v);
      sentry?.captureException(error);
    });
  };
}

export async function flushReports(timeoutMs = 2000): Promise<void> {
  if (sentry?.getClient()) await sentry.flush(timeoutMs);
}
