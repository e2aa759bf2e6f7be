/**
 * /healthz, /readyz and /metrics: the same three routes on the API's port and on a worker's own port, unless
 * /metrics is served apart (SPECULA_METRICS_PORT), where it may also ask for a key (SPECULA_METRICS_KEY).
 * Readiness answers 503 when its check fails or takes longer than READY_MS (a frozen Redis must not freeze it),
 * and while the process shuts down; its body says why.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ServerMetrics } from './metrics.js';

export const READY_MS = 2000;

/** Null when the process can take work; else why it cannot, for /readyz's body. */
export type Readiness = () => Promise<string | null>;

export interface MetricsRoute {
  metrics: ServerMetrics;
  /** Set: a scrape must send `Authorization: Bearer <key>`. */
  key?: string;
  report?: (error: unknown, extra?: Record<string, string>) => void;
}

export interface HealthDeps {
  /** Null where /metrics is served on a port of its own (metricsServer): here it is not found. */
  metrics: MetricsRoute | null;
  ready: Readiness;
  closing(): boolean;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

function serveMetrics(req: IncomingMessage, res: ServerResponse, route: MetricsRoute): void {
  if (route.key !== undefined) {
    const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(given), digest(route.key))) {
      res.writeHead(401, { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Bearer' });
      res.end('{"error":"the metrics key is missing or wrong"}');
      return;
    }
  }
  route.metrics.text().then(
    (text) => {
      res.writeHead(200, { 'content-type': route.metrics.contentType });
      res.end(text);
    },
    (e: unknown) => {
      route.report?.(e, { path: '/metrics' });
      json(res, 500, { error: 'metrics unavailable' });
    },
  );
}

function serveReady(res: ServerResponse, deps: HealthDeps): void {
  if (deps.closing()) {
    json(res, 503, { status: 'shutting down' });
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  Promise.race([
    deps.ready(),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`the readiness check took over ${READY_MS} ms`), READY_MS);
    }),
  ])
    .catch(() => 'the readiness check failed')
    .then((reason) => {
      clearTimeout(timer);
      json(res, reason === null ? 200 : 503, reason === null ? { status: 'ready' } : { status: 'not ready', reason });
    });
}

/** Answers the request when it is one of the three routes (and served here); false otherwise. */
export function serveHealth(req: IncomingMessage, res: ServerResponse, deps: HealthDeps): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    json(res, 200, { status: 'ok' });
    return true;
  }
  if (path === '/readyz') {
    serveReady(res, deps);
    return true;
  }
  if (path === '/metrics' && deps.metrics) {
    serveMetrics(req, res, deps.metrics);
    return true;
  }
  return false;
}

/** /metrics alone, on a port of its own (SPECULA_METRICS_PORT): one a firewall or network policy keeps private. */
export function metricsServer(route: MetricsRoute): Server {
  return createServer((req, res) => {
    if ((req.url ?? '/').split('?')[0] === '/metrics') serveMetrics(req, res, route);
    else json(res, 404, { error: 'not found' });
  });
}
