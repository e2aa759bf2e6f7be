/**
 * Error reporting. With SENTRY_DSN set, unexpected errors go to Sentry with what identifies them (job id,
 * operation); without it they are logged. Errors the client caused (typed codes) are never reported.
 */
import * as Sentry from '@sentry/node';
import type { Logger } from './logger.js';

export type Reporter = (error: unknown, extra?: Record<string, string>) => void;

export function createReporter(dsn: string | undefined, logger: Logger): Reporter {
  if (dsn) {
    // No request bodies (documents, reference text) and no user data leave with an event.
    Sentry.init({ dsn, tracesSampleRate: 0.1, dataCollection: { httpBodies: [], userInfo: false, cookies: false } });
    logger.info('errors are reported to Sentry');
  }
  return (error, extra = {}) => {
    logger.error({ err: error, ...extra }, 'unexpected error');
    if (!dsn) return;
    Sentry.withScope((scope) => {
      for (const [k, v] of Object.entries(extra)) scope.setTag(k, v);
      Sentry.captureException(error);
    });
  };
}

export async function flushReports(timeoutMs = 2000): Promise<void> {
  if (Sentry.getClient()) await Sentry.flush(timeoutMs);
}
