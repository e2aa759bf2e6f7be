/**
 * The HTTP server: yoga on /graphql (queries, mutations, multipart uploads, subscriptions over SSE), graphql-ws
 * on the same path for WebSocket clients, /healthz, /readyz and /metrics beside it.
 *
 * Plugin order: CSRF prevention (before any body is parsed), then the cheap hostile-query guards (tokens,
 * depth, aliases) that run at validation, then logging. The schema's own complexity limit runs at execution;
 * yoga masks unexpected errors last, reporting them first.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import { createFetch } from '@whatwg-node/fetch';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaInitialContext, type YogaServerInstance } from 'graphql-yoga';
import type { EngineInfo, RequestContext, UrlFetcher } from '../resolvers/context.js';
import type { Jobs } from '../jobs/jobs.js';
import type { ApiKeys, AuthResult } from './auth.js';
import type { ServerConfig } from './config.js';
import type { Logger } from './logger.js';
import type { GraphiQLPages } from './graphiql.js';
import type { ServerMetrics } from './metrics.js';
import { downloadJobId } from '../resolvers/downloads.js';
import { serveDownload } from './downloads.js';
import { type MetricsRoute, type Readiness, serveHealth } from './health.js';
import { clientValidationErrors, maskError, yogaLogger } from './masked-errors.js';
import { servePlayground } from './playground.js';
import { queryGuards } from './query-guards.js';
import { base64BodyLimit, refuseUnreadable } from './request-gate.js';
import type { Reporter } from './sentry.js';
import { type ServerContext, serveGraphqlWs, webSocketServer } from './websocket.js';

export const CSRF_HEADER = 'x-graphql-yoga-csrf';

export interface AppDeps {
  schema: GraphQLSchema;
  config: ServerConfig;
  keys: ApiKeys;
  jobs: Jobs;
  engine: EngineInfo;
  fetchUrl: UrlFetcher | null;
  metrics: ServerMetrics;
  /** /metrics, with the key it asks for (SPECULA_METRICS_KEY) and where its failures are reported. */
  metricsRoute: MetricsRoute;
  logger: Logger;
  report: Reporter;
  /** Readiness beyond "the process is up" (the queue answers, a worker is there): null, or why not. */
  ready: Readiness;
  /** GraphiQL's page and its assets (./graphiql.ts), when SPECULA_GRAPHIQL is set. */
  graphiql?: GraphiQLPages;
}

export interface App {
  server: Server;
  /** Listen on the configured (or given) port; resolves with the port actually bound. */
  listen(port?: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

type Yoga = YogaServerInstance<ServerContext, RequestContext>;

/** What an operation's resolvers see: the tenant (or why there is none), the services, the limits. */
function requestContext(deps: AppDeps, auth: AuthResult, shutdown: AbortSignal): RequestContext {
  const { limits } = deps.config;
  return {
    tenant: auth.ok ? auth.tenant : null,
    ...(auth.ok ? {} : { authFailure: auth.reason }),
    jobs: deps.jobs,
    engine: deps.engine,
    limits: {
      uploadBytes: limits.uploadBytes,
      pages: limits.pages,
      activeJobs: limits.activeJobs,
      depth: limits.depth,
      complexity: limits.complexity,
    },
    fetchUrl: deps.fetchUrl,
    report: deps.report,
    shutdown,
  };
}

/** Each operation logged at debug: its name, tenant, time and error count. */
function logOperations(logger: Logger): Plugin {
  return {
    onExecute({ args }) {
      const t0 = performance.now();
      const ctx = args.contextValue as unknown as RequestContext;
      return {
        onExecuteDone({ result }) {
          const errors = 'errors' in result && Array.isArray(result.errors) ? result.errors.length : 0;
          logger.debug(
            { op: args.operationName ?? null, tenant: ctx.tenant, ms: Math.round(performance.now() - t0), errors },
            'graphql',
          );
        },
      };
    },
  };
}

/**
 * GraphQL request metrics (yoga's Prometheus plugin) in our registry, served on our /metrics: the three series
 * docs/deploy.md lists, and no label a client chooses (operation name, the URL with its Host and query string, an
 * error's path through aliases), each of which would let clients grow the metrics without bound.
 */
function requestMetrics(metrics: ServerMetrics): Plugin {
  return usePrometheus({
    registry: metrics.registry,
    endpoint: false,
    labels: { operationName: false, url: false, path: false },
    metrics: {
      graphql_yoga_http_duration: true,
      graphql_envelop_request_duration: true,
      graphql_envelop_error_result: true,
      graphql_envelop_request: false,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_execute_resolver: false,
      graphql_envelop_phase_parse: false,
      graphql_envelop_phase_validate: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_phase_execute: false,
      graphql_envelop_phase_subscribe: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
    },
  });
}

/** Yoga's CSRF check, its refusal (HTTP 403) given a stable code: the plugin's own error has none. */
function csrfPrevention(): Plugin {
  const check = useCSRFPrevention({ requestHeaders: [CSRF_HEADER] });
  return {
    onRequestParse(payload) {
      try {
        return check.onRequestParse?.(payload);
      } catch (e) {
        if (!(e instanceof GraphQLError) || e.extensions.http?.status !== 403) throw e;
        throw new GraphQLError(
          `a multipart or form request must carry the "${CSRF_HEADER}" header (any value), ` +
            'which a page on another site cannot add',
          { extensions: { code: 'CSRF_HEADER_REQUIRED', http: { status: 403 } } },
        );
      }
    },
  };
}

/** Yoga's plugins, in the order the file header explains. */
function yogaPlugins(deps: AppDeps): Plugin[] {
  return [
    csrfPrevention(),
    ...queryGuards(deps.config),
    clientValidationErrors,
    logOperations(deps.logger),
    requestMetrics(deps.metrics),
  ];
}

function createGraphqlYoga(deps: AppDeps, shutdown: AbortSignal, base64Limit: number): Yoga {
  const { config, keys, logger } = deps;
  return createYoga<ServerContext, RequestContext>({
    schema: deps.schema,
    graphqlEndpoint: '/graphql',
    // Yoga's own GraphiQL loads its assets from a CDN; ours is served only when asked for. Keyless, requests go
    // without a key: a placeholder one would be refused (UNAUTHENTICATED), introspection included.
    graphiql: Boolean(deps.graphiql) && {
      title: 'Specula',
      ...(keys.allowAnonymous ? {} : { headers: JSON.stringify({ authorization: 'Bearer <your key>' }) }),
    },
    ...(deps.graphiql ? { renderGraphiQL: deps.graphiql.render } : {}),
    landingPage: false,
    logging: yogaLogger(logger),
    fetchAPI: createFetch({
      formDataLimits: {
        fileSize: config.limits.uploadBytes,
        files: 1,
        fieldSize: config.limits.uploadBytes * 2,
        fields: 8,
      },
    }),
    context: ({ request, wsAuth }: YogaInitialContext & ServerContext) =>
      requestContext(deps, wsAuth ?? keys.authenticate(request.headers.get('authorization')), shutdown),
    plugins: yogaPlugins(deps),
    // One limit for every transport (multipart, base64 in JSON, streamed without a length): ours, not yoga's
    // default 25,000,000 bytes, which sat under the documented 25 MiB and could not be raised.
    maxRequestBodySize: base64Limit,
    maskedErrors: { maskError: maskError(logger, deps.report, config.limits) },
  });
}

/** What the HTTP routes share: the app's services, yoga, and the open SSE streams that closing waits for. */
interface Routes {
  deps: AppDeps;
  yoga: Yoga;
  base64Limit: number;
  closing: () => boolean;
  streams: Set<ServerResponse>;
}

/** Send a request to its route: health and metrics, the playground, downloads, GraphiQL, or yoga. */
function route(routes: Routes, req: IncomingMessage, res: ServerResponse): void {
  const { deps, yoga } = routes;
  const url = req.url ?? '/';
  const path = url.split('?')[0];
  // /metrics is not found here when it is served on a port of its own (SPECULA_METRICS_PORT).
  const metrics = deps.config.metricsPort === undefined ? deps.metricsRoute : null;
  if (serveHealth(req, res, { metrics, ready: deps.ready, closing: routes.closing })) return;
  if (servePlayground(path, res)) return;
  if (deps.graphiql?.serveAsset(path, res)) return;
  const download = downloadJobId(path);
  if (download) {
    void serveDownload(req, res, download, {
      jobs: deps.jobs,
      keys: deps.keys,
      report: (e) => deps.report(e, { route: 'download' }),
    });
    return;
  }
  if (
    path === yoga.graphqlEndpoint &&
    deps.graphiql &&
    req.method === 'GET' &&
    (req.headers.accept ?? '').includes('text/html')
  ) {
    void yoga.handle(req, res);
    return;
  }
  if (path === yoga.graphqlEndpoint && refuseUnreadable(req, res, deps.keys, deps.config.limits, routes.base64Limit))
    return;
  if ((req.headers.accept ?? '').includes('text/event-stream')) {
    routes.streams.add(res);
    res.once('close', () => routes.streams.delete(res));
  }
  void yoga.handle(req, res);
}

export function createApp(deps: AppDeps): App {
  const { config } = deps;
  let closing = false;
  // Shutting down ends every subscription's stream (SSE gets its "complete" event) before connections are cut.
  const shutdown = new AbortController();
  const streams = new Set<ServerResponse>();
  const base64Limit = base64BodyLimit(config.limits.uploadBytes);
  const yoga = createGraphqlYoga(deps, shutdown.signal, base64Limit);
  const routes: Routes = { deps, yoga, base64Limit, closing: () => closing, streams };
  const server = createServer((req, res) => route(routes, req, res));
  const wss = webSocketServer(server, yoga.graphqlEndpoint, base64Limit);
  const ws = serveGraphqlWs(wss, yoga, deps.keys);

  return {
    server,
    listen: (port = config.port, host = config.host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      }),
    close: async () => {
      closing = true;
      shutdown.abort();
      // The SSE streams end themselves once their subscriptions do; a stuck one is cut after a moment.
      const deadline = Date.now() + 2000;
      while (streams.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await ws.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
