/**
 * /healthz, /readyz and /metrics: the same three routes on the API's port and on a worker's own port.
 * Readiness answers 503 when its check fails or takes longer than READY_MS (a frozen Redis must not freeze it),
 * and while the process shuts down.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerMetrics } from './metrics.js';

export const READY_MS = 2000;

export interface HealthDeps {
  metrics: ServerMetrics;
  ready(): Promise<boolean>;
  closing(): boolean;
  report?: (error: unknown, extra?: Record<string, string>) => void;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Answers the request when it is one of the three routes; false otherwise. */
export function serveHealth(req: IncomingMessage, res: ServerResponse, deps: HealthDeps): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    json(res, 200, { status: 'ok' });
    return true;
  }
  if (path === '/readyz') {
    if (deps.closing()) {
      json(res, 503, { status: 'shutting down' });
      return true;
    }
    Promise.race([
      deps.ready(),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), READY_MS).unref()),
    ]).then(
      (ok) => json(res, ok ? 200 : 503, { status: ok ? 'ready' : 'not ready' }),
      () => json(res, 503, { status: 'not ready' }),
    );
    return true;
  }
  if (path === '/metrics') {
    deps.metrics.text().then(
      (text) => {
        res.writeHead(200, { 'content-type': deps.metrics.contentType });
        res.end(text);
      },
      (e: unknown) => {
        deps.report?.(e, { path: '/metrics' });
        json(res, 500, { error: 'metrics unavailable' });
      },
    );
    return true;
  }
  return false;
}
