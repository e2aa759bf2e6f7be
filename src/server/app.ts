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
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import { createFetch } from '@whatwg-node/fetch';
import {
  type ExecutionArgs,
  GraphQLError,
  type GraphQLSchema,
  NoSchemaIntrospectionCustomRule,
  type ValidationContext,
} from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import type { EngineInfo, RequestContext, UrlFetcher } from '../resolvers/context.js';
import type { Jobs } from '../jobs/jobs.js';
import type { ApiKeys, AuthResult } from './auth.js';
import type { ServerConfig } from './config.js';
import type { Logger } from './logger.js';
import type { ServerMetrics } from './metrics.js';
import { downloadJobId } from '../resolvers/downloads.js';
import { serveDownload } from './downloads.js';
import { serveHealth } from './health.js';
import { servePlayground } from './playground.js';
import type { Reporter } from './sentry.js';

export const CSRF_HEADER = 'x-graphql-yoga-csrf';
/** Multipart framing and the operations field ride on top of the file itself. */
const MULTIPART_OVERHEAD = 1024 * 1024;

export interface AppDeps {
  schema: GraphQLSchema;
  config: ServerConfig;
  keys: ApiKeys;
  jobs: Jobs;
  engine: EngineInfo;
  fetchUrl: UrlFetcher | null;
  metrics: ServerMetrics;
  logger: Logger;
  report: Reporter;
  /** Readiness beyond "the process is up": the queue answers, the engine is open. */
  ready(): Promise<boolean>;
  /** GraphiQL's page with its assets inlined (@graphql-yoga/render-graphiql), when SPECULA_GRAPHIQL is set. */
  renderGraphiQL?: (opts: Record<string, unknown>) => string;
}

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

/**
 * Selection sets nested deeper than this are refused before graphql-js parses them: its parser recurses once per
 * level, and a few thousand levels (well under the token limit) overflow the stack, an INTERNAL error instead of
 * a refusal. The standard introspection query nests 15 deep; the depth limit proper runs at validation.
 */
const MAX_NESTING = 64;

function nesting(source: string): number {
  let depth = 0;
  let most = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '"') {
      // Skip strings (and block strings): braces in them are not selections.
      const block = source.startsWith('"""', i);
      const end = block ? source.indexOf('"""', i + 3) : source.indexOf('"', i + 1);
      i = end < 0 ? source.length : end + (block ? 2 : 0);
    } else if (c === '#') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
    } else if (c === '{') {
      most = Math.max(most, ++depth);
    } else if (c === '}') {
      depth--;
    }
  }
  return most;
}

const nestingGuard: Plugin = {
  onParse({ params }) {
    const source = typeof params.source === 'string' ? params.source : params.source.body;
    const n = nesting(source);
    if (n > MAX_NESTING) {
      throw new GraphQLError(`the query nests ${n} levels deep; at most ${MAX_NESTING}`, {
        extensions: { code: 'QUERY_TOO_DEEP', http: { status: 400 } },
      });
    }
  },
};

/** Introspection refused at validation, where SPECULA_INTROSPECTION=0. */
const noIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

export interface App {
  server: Server;
  /** Listen on the configured (or given) port; resolves with the port actually bound. */
  listen(port?: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

interface ServerContext {
  req?: IncomingMessage;
  /** graphql-ws: the tenant the connection authenticated as. */
  wsAuth?: AuthResult;
}

/** graphql-armor's guards report plain errors; give them a stable code instead. */
function coded(code: string): {
  propagateOnRejection: false;
  onReject: ((ctx: ValidationContext | null, error: GraphQLError) => void)[];
} {
  return {
    propagateOnRejection: false,
    onReject: [
      (ctx, error) =>
        ctx?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, ''), { extensions: { code } })),
    ],
  };
}

/**
 * A refused request still has its body read (and thrown away) before the answer goes out: a client that is
 * still sending when the server answers and closes gets EPIPE from its socket (Node's fetch reports only "fetch
 * failed") and never sees the status. Not without bound: past DRAIN_BYTES or DRAIN_MS the answer goes and the
 * connection is cut.
 */
const DRAIN_BYTES = 64 * 1024 * 1024;
const DRAIN_MS = 15_000;

function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  let sent = false;
  const send = (cut: boolean): void => {
    if (sent) return;
    sent = true;
    clearTimeout(timer);
    res.setHeader('connection', 'close');
    json(res, status, { errors: [{ message, extensions: { code, ...extra } }] });
    if (cut) res.on('finish', () => req.destroy());
  };
  let seen = 0;
  const declared = Number(req.headers['content-length'] ?? 0);
  const timer = setTimeout(() => send(true), DRAIN_MS);
  if (declared > DRAIN_BYTES) return send(true);
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_BYTES) send(true);
  });
  req.on('end', () => send(false));
  req.on('error', () => send(true));
  req.resume();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export function createApp(deps: AppDeps): App {
  const { config, keys, logger, report } = deps;
  let closing = false;
  // Shutting down ends every subscription's stream (SSE gets its "complete" event) before connections are cut.
  const shutdown = new AbortController();
  const streams = new Set<ServerResponse>();
  // A base64 document is 4/3 of its bytes; the rest of the request is small.
  const base64Limit = Math.ceil((config.limits.uploadBytes * 4) / 3) + MULTIPART_OVERHEAD;

  const makeContext = (auth: AuthResult): RequestContext => ({
    tenant: auth.ok ? auth.tenant : null,
    ...(auth.ok ? {} : { authFailure: auth.reason }),
    jobs: deps.jobs,
    engine: deps.engine,
    limits: {
      uploadBytes: config.limits.uploadBytes,
      pages: config.limits.pages,
      activeJobs: config.limits.activeJobs,
      depth: config.limits.depth,
      complexity: config.limits.complexity,
    },
    fetchUrl: deps.fetchUrl,
    report,
    shutdown: shutdown.signal,
  });

  const logOperations: Plugin = {
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

  const yoga = createYoga<ServerContext, RequestContext>({
    schema: deps.schema,
    graphqlEndpoint: '/graphql',
    // Yoga's own GraphiQL loads its assets from a CDN; the inlined one is served only when asked for.
    graphiql: Boolean(deps.renderGraphiQL) && {
      title: 'Specula',
      headers: JSON.stringify({ authorization: 'Bearer <your key>' }),
    },
    ...(deps.renderGraphiQL ? { renderGraphiQL: deps.renderGraphiQL } : {}),
    landingPage: false,
    logging: logger,
    fetchAPI: createFetch({
      formDataLimits: {
        fileSize: config.limits.uploadBytes,
        files: 1,
        fieldSize: config.limits.uploadBytes * 2,
        fields: 8,
      },
    }),
    context: ({ request, wsAuth }: YogaInitialContext & ServerContext) =>
      makeContext(wsAuth ?? keys.authenticate(request.headers.get('authorization'))),
    plugins: [
      useCSRFPrevention({ requestHeaders: [CSRF_HEADER] }),
      nestingGuard,
      maxTokensPlugin({ n: 5000 }),
      // Introspection is deep by nature (getIntrospectionQuery nests 15 levels) and bounded by the schema itself.
      maxDepthPlugin({
        n: config.limits.depth,
        ignoreIntrospection: true,
        flattenFragments: true,
        ...coded('QUERY_TOO_DEEP'),
      }),
      maxAliasesPlugin({ n: 20, ...coded('QUERY_TOO_COMPLEX') }),
      ...(config.introspection ? [] : [noIntrospection]),
      logOperations,
      // GraphQL request metrics (yoga's Prometheus plugin) in our registry, served on our /metrics. No operation
      // name label: clients choose those, and a label per name would let them grow the metrics without bound.
      usePrometheus({
        registry: deps.metrics.registry,
        endpoint: false,
        labels: { operationName: false },
        metrics: {
          graphql_yoga_http_duration: true,
          graphql_envelop_request_duration: true,
          graphql_envelop_error_result: true,
          graphql_envelop_phase_parse: false,
          graphql_envelop_phase_validate: false,
          graphql_envelop_phase_context: false,
          graphql_envelop_phase_execute: false,
          graphql_envelop_phase_subscribe: false,
          graphql_envelop_deprecated_field: false,
          graphql_envelop_schema_change: false,
        },
      }),
    ],
    // One limit for every transport (multipart, base64 in JSON, streamed without a length): ours, not yoga's
    // default 25,000,000 bytes, which sat under the documented 25 MiB and could not be raised.
    maxRequestBodySize: base64Limit,
    maskedErrors: {
      maskError(error, message) {
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
          return new GraphQLError(
            `the request is over the limit: documents are limited to ${config.limits.uploadBytes} bytes`,
            {
              extensions: { code: 'UPLOAD_TOO_LARGE', limit: config.limits.uploadBytes, http: { status: 413 } },
            },
          );
        }
        const original = error instanceof GraphQLError ? error.originalError : error;
        // Ours (typed, with a code), GraphQL's own validation errors, and the guards' errors pass through.
        if (error instanceof GraphQLError && (!original || original instanceof GraphQLError)) return error;
        const path = error instanceof GraphQLError && error.path ? error.path.join('.') : '';
        report(original ?? error, path ? { path } : {});
        return new GraphQLError(message, { extensions: { code: 'INTERNAL' } });
      },
    },
  });

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0];
    if (path === '/healthz' || path === '/readyz' || path === '/metrics') {
      serveHealth(req, res, { metrics: deps.metrics, ready: deps.ready, closing: () => closing, report });
      return;
    }
    if (servePlayground(path, res)) return;
    const download = downloadJobId(path);
    if (download) {
      void serveDownload(req, res, download, {
        jobs: deps.jobs,
        keys,
        report: (e) => report(e, { route: 'download' }),
      });
      return;
    }
    if (
      path === yoga.graphqlEndpoint &&
      deps.renderGraphiQL &&
      req.method === 'GET' &&
      (req.headers.accept ?? '').includes('text/html')
    ) {
      void yoga.handle(req, res);
      return;
    }
    if (path === yoga.graphqlEndpoint) {
      // Who is asking is settled before any body is read: a stranger cannot make the server buffer anything.
      const auth = keys.authenticate(req.headers.authorization);
      if (!auth.ok) {
        res.setHeader('www-authenticate', 'Bearer');
        return refuse(
          req,
          res,
          401,
          'UNAUTHENTICATED',
          auth.reason === 'unknown'
            ? 'the API key is not valid'
            : auth.reason === 'malformed'
              ? 'send the API key as "Authorization: Bearer <key>"'
              : 'an API key is required: send "Authorization: Bearer <key>"',
        );
      }
      // Bodies are bounded before they are read. Multipart may stream (its parser enforces the file limit);
      // other bodies must declare their length, which may hold a base64 document.
      const declared = Number(req.headers['content-length'] ?? NaN);
      const multipart = (req.headers['content-type'] ?? '').startsWith('multipart/form-data');
      const limit = multipart ? config.limits.uploadBytes + MULTIPART_OVERHEAD : base64Limit;
      if (declared > limit) {
        return refuse(
          req,
          res,
          413,
          'UPLOAD_TOO_LARGE',
          `the request is ${declared} bytes; documents are limited to ${config.limits.uploadBytes} bytes`,
          { limit: config.limits.uploadBytes },
        );
      }
      if (req.method === 'POST' && !multipart && Number.isNaN(declared)) {
        return refuse(
          req,
          res,
          411,
          'BAD_USER_INPUT',
          'send a Content-Length with the request body (only multipart uploads may stream)',
        );
      }
    }
    if ((req.headers.accept ?? '').includes('text/event-stream')) {
      streams.add(res);
      res.once('close', () => streams.delete(res));
    }
    void yoga.handle(req, res);
  });

  const wss = new WebSocketServer({ server, path: yoga.graphqlEndpoint, maxPayload: base64Limit });
  const wsAuth = new WeakMap<object, AuthResult>();
  const ws = useServer<Record<string, unknown>, { request: IncomingMessage }>(
    {
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
      onConnect: (ctx) => {
        const given =
          ctx.connectionParams?.authorization ??
          ctx.connectionParams?.Authorization ??
          ctx.extra.request.headers.authorization;
        const auth = keys.authenticate(typeof given === 'string' ? given : undefined);
        if (!auth.ok) return false; // closes with 4403 Forbidden
        wsAuth.set(ctx, auth);
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          req: ctx.extra.request,
          wsAuth: wsAuth.get(ctx),
          params: payload,
        });
        let document;
        try {
          document = parse(payload.query);
        } catch (e) {
          return [e instanceof GraphQLError ? e : new GraphQLError(String(e))];
        }
        const errors = validate(schema, document);
        if (errors.length) return errors;
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
      },
    },
    wss,
  );

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
