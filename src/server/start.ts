/**
 * Start Specula in a role. `all` (the default): the API and a worker in one process. `api`: the API alone; it
 * never loads the model (it reads the bundle's config to check decoding options) and needs Redis to reach
 * workers. `worker`: the engine taking jobs off the queue, with /healthz, /readyz and /metrics on its own port.
 * Without SPECULA_REDIS_URL everything is in-process; with it, store, queue, events and blobs live in Redis.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { schema } from '../../schema/index.js';
import { loadSharp } from '../document/sharp.js';
import { DEFAULT_SOURCE_LIMITS } from '../document/source.js';
import {
  type BundleConfig,
  choosePrecision,
  DEFAULT_BUNDLE,
  type Precision,
  readBundleConfig,
} from '../engine/bundle/bundle.js';
import { Engine } from '../engine/engine.js';
import { type Backends, createBackends } from '../jobs/backends.js';
import type { WorkerStats } from '../jobs/fleet.js';
import { type JobBackends, Jobs } from '../jobs/jobs.js';
import { urlFetcher } from '../resolvers/fetch-url.js';
import { startWorker } from '../worker/start-worker.js';
import { type App, createApp } from './app.js';
import { ApiKeys } from './auth.js';
import { ConfigError, engineOptions, formulaReader, type ServerConfig } from './config.js';
import type { FormulaReader } from '../worker/formula-reader.js';
import { engineInfo } from './engine-info.js';
import { type MetricsRoute, metricsServer, type Readiness, serveHealth } from './health.js';
import { createLogger, type Logger } from './logger.js';
import { ServerMetrics } from './metrics.js';
import { createReporter, flushReports, type Reporter } from './sentry.js';

export interface StartOptions {
  logger?: Logger;
  /** An engine already open (it is left open on close). */
  engine?: Engine;
  /** Replace backends (tests inject failing ones to check that outages are masked and reported). */
  backends?: Partial<JobBackends>;
}

export interface RunningServer {
  role: ServerConfig['role'];
  /** The port serving GraphQL (api, all) or health and metrics (worker). */
  port: number;
  app: App | null;
  engine: Engine | null;
  jobs: Jobs;
  backends: Backends;
  metrics: ServerMetrics;
  /** The port serving /metrics alone (SPECULA_METRICS_PORT); null where /metrics is on `port`. */
  metricsPort: number | null;
  logger: Logger;
  close(): Promise<void>;
}

const HEARTBEAT_MS = 2000;

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** A worker's own small HTTP surface: liveness, readiness (Redis answers), Prometheus metrics (unless apart). */
function workerHttp(metrics: MetricsRoute | null, ready: Readiness, closing: () => boolean): Server {
  return createServer((req, res) => {
    if (serveHealth(req, res, { metrics, ready, closing })) return;
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
    res.end('{"error":"not found"}');
  });
}

/** What the roles' parts share once the backends are open and the engine (if any) is loaded. */
interface Parts {
  config: ServerConfig;
  logger: Logger;
  report: Reporter;
  backends: Backends;
  jobs: Jobs;
  engine: Engine | null;
  metrics: ServerMetrics;
  workerId: string;
  /** This process's own worker stats; null without an engine. */
  localStats: () => WorkerStats | null;
  /** /metrics with its key and reporter, wherever it is served. */
  metricsRoute: MetricsRoute;
}

/** The config the API serves with: its upload limit lowered to what the blob store keeps. */
function withUploadLimit(config: ServerConfig): ServerConfig {
  // Redis keeps uploads in memory: an upload may not be larger than what the blob store will keep.
  const uploadBytes = config.redisUrl
    ? Math.min(config.limits.uploadBytes, config.redisBlobMaxBytes)
    : config.limits.uploadBytes;
  return { ...config, limits: { ...config.limits, uploadBytes } };
}

/** Open the job backends (in memory, or in Redis with SPECULA_REDIS_URL), logging when Redis goes and comes back. */
function openBackends(config: ServerConfig, logger: Logger): Promise<Backends> {
  return createBackends({
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    blobDir: config.blobDir,
    redisBlobMaxBytes: config.redisBlobMaxBytes,
    retentionSeconds: config.retentionSeconds,
    jobAttempts: config.jobAttempts,
    tenantConcurrency: config.tenantConcurrency,
    tenantRatePerMinute: config.tenantRatePerMinute,
    lockMs: config.lockMs,
    shutdownGraceMs: config.shutdownGraceMs,
    failFast: config.role === 'api',
    onRedisState: (connection, state, err) => {
      if (state === 'down')
        logger.warn(
          { connection, err: err?.message },
          'redis unreachable: requests that need it answer STORE_UNAVAILABLE until it is back',
        );
      else logger.info({ connection }, 'redis reachable again');
    },
  });
}

/** This process's worker stats, read off its engine and metrics (what a heartbeat reports to the fleet). */
function workerStats(engine: Engine | null, metrics: ServerMetrics, workerId: string): () => WorkerStats | null {
  return () =>
    engine && {
      worker: workerId,
      device: engine.bundle.device,
      queuedLines: engine.stats.queued,
      activeLines: engine.stats.active,
      maxBatch: engine.maxBatch,
      forwards: metrics.forwards,
      committed: metrics.committed,
      rowForwards: metrics.rowForwards,
      forwardMs: metrics.forwardMs,
    };
}

/**
 * The workers that are up, as the engine query and /metrics count them: in one process (embedded, or role all)
 * the stats are read off its own engine; an API instance reads the workers' heartbeats.
 */
function liveWorkers(p: Parts): Promise<WorkerStats[]> {
  if (p.backends.mode === 'embedded' || p.config.role === 'all')
    return Promise.resolve([p.localStats()].filter((s): s is WorkerStats => s !== null));
  return p.backends.fleet.workers();
}

/**
 * Null when this process can take work, else why not: the store answers, the image library loaded (where it reads
 * pages) and, for an API instance, enough workers are up that a job will not wait in the queue unseen.
 */
function readiness(p: Parts, imagesLoad: () => boolean): Readiness {
  return async () => {
    if (!imagesLoad()) return 'the image library failed to load';
    const store = await Promise.all([p.backends.queue.depth(), p.backends.ping()]).then(
      ([, pong]) => pong,
      () => false,
    );
    if (!store) return 'the job store (Redis) does not answer';
    if (p.config.role !== 'api' || p.config.readyMinWorkers === 0) return null;
    const live = (await liveWorkers(p)).length;
    return live >= p.config.readyMinWorkers
      ? null
      : `no live worker: ${live} up, ${p.config.readyMinWorkers} needed (SPECULA_READY_MIN_WORKERS); ` +
          'jobs wait in the queue until one starts';
  };
}

/**
 * Take jobs off the queue with this process's engine, and (under Redis) report to the fleet on a heartbeat.
 * Returns what close must stop, and the formula reader it must close.
 */
function startEngineWork(p: Parts, engine: Engine): { stops: (() => void)[]; formulas: FormulaReader | null } {
  const { config, backends, metrics, logger, workerId } = p;
  const stops: (() => void)[] = [];
  stops.push(engine.observeForwards((o) => metrics.forward(o)));
  const limits = {
    ...DEFAULT_SOURCE_LIMITS,
    maxPixels: config.limits.pixels,
    pixelsInFlight: config.limits.pixelsInFlight,
    maxPages: config.limits.pages,
  };
  const formulas = formulaReader(config, engine.bundle.device);
  const report = (e: unknown, jobId: string): void => p.report(e, { jobId });
  startWorker(
    { engine, formulas, ...backends, limits, report, onPageRead: (ms) => metrics.pageRead(ms) },
    backends.queue,
    config.concurrency,
    {
      started: (jobId) => {
        metrics.jobStarted();
        logger.info({ jobId, worker: workerId }, 'job started');
      },
      finished: (jobId, status, ms, sinceSubmitMs) => {
        metrics.jobFinished(status, sinceSubmitMs);
        logger.info({ jobId, status, ms: Math.round(ms), worker: workerId }, 'job finished');
      },
    },
  );
  if (backends.mode === 'redis') {
    const beat = (): void => {
      const s = p.localStats();
      if (s) backends.fleet.report(s).catch((e: unknown) => logger.warn({ err: e }, 'worker heartbeat failed'));
    };
    beat();
    const timer = setInterval(beat, HEARTBEAT_MS);
    stops.push(() => clearInterval(timer));
  }
  return { stops, formulas };
}

/** Serve the GraphQL API (roles all and api) on the configured port. */
async function serveApi(
  p: Parts,
  keys: ApiKeys,
  effective: ServerConfig,
  ready: Readiness,
): Promise<{ app: App; port: number }> {
  const { config, backends, engine, logger } = p;
  const bundle = engine ? engine.bundle : apiBundle(config);
  const app = createApp({
    schema,
    config: effective,
    keys,
    jobs: p.jobs,
    engine: engineInfo(
      bundle,
      () => liveWorkers(p),
      () => backends.queue.depth(),
    ),
    fetchUrl: config.urlInput.enabled ? urlFetcher(config.urlInput.timeoutMs) : null,
    metrics: p.metrics,
    metricsRoute: p.metricsRoute,
    logger,
    report: p.report,
    ready,
    // GraphiQL's bundle (9 MB of JavaScript) loads only when it is asked for.
    ...(config.graphiql ? { graphiql: (await import('./graphiql.js')).graphiqlPages } : {}),
  });
  const port = await app.listen();
  logger.info(
    { port, role: config.role, mode: backends.mode, anonymous: keys.allowAnonymous, tenants: keys.size },
    `serving http://localhost:${port}/graphql`,
  );
  return { app, port };
}

/** Serve a worker's health and metrics (role worker) on its own port. */
async function serveWorkerHttp(
  p: Parts,
  ready: Readiness,
  stopping: () => boolean,
): Promise<{ workerServer: Server; port: number }> {
  const { config, engine } = p;
  const workerServer = workerHttp(config.metricsPort === undefined ? p.metricsRoute : null, ready, stopping);
  const port = await listen(workerServer, config.workerPort, config.host);
  p.logger.info(
    {
      port,
      role: config.role,
      mode: p.backends.mode,
      worker: p.workerId,
      model: engine?.bundle.config.name,
      device: engine?.bundle.device,
    },
    'worker up',
  );
  return { workerServer, port };
}

export async function startServer(config: ServerConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const { role } = config;
  if (role !== 'all' && !config.redisUrl) {
    throw new ConfigError(
      `--role ${role} needs SPECULA_REDIS_URL: without Redis, the API and ` +
        `the worker must share one process (--role all)`,
    );
  }
  const runsApi = role !== 'worker';
  const runsWorker = role !== 'api';
  const keys = runsApi ? ApiKeys.fromConfig(config) : null; // fails fast on a bad key list, before the model loads
  const report = await createReporter(config.sentryDsn, logger);
  const effective = withUploadLimit(config);
  const made = await openBackends(config, logger);
  const backends: Backends = { ...made, ...opts.backends };
  const jobs = new Jobs(backends);

  const engine = runsWorker ? (opts.engine ?? (await Engine.open(config.model, engineOptions(config)))) : null;
  const metrics = new ServerMetrics({
    queueDepth: () => backends.queue.depth(),
    liveWorkers: async () => (await liveWorkers(p)).length,
    ...(engine ? { engineLoad: () => ({ queued: engine.stats.queued, active: engine.stats.active }) } : {}),
  });
  const workerId = `${hostname()}:${process.pid}`;
  const localStats = workerStats(engine, metrics, workerId);
  const metricsRoute: MetricsRoute = { metrics, report, ...(config.metricsKey ? { key: config.metricsKey } : {}) };
  const p: Parts = { config, logger, report, backends, jobs, engine, metrics, workerId, localStats, metricsRoute };
  const { stops, formulas } = engine ? startEngineWork(p, engine) : { stops: [], formulas: null };

  let app: App | null = null;
  let workerServer: Server | null = null;
  let stopping = false;
  let port: number;
  // False once the image library has failed to load (below): a worker that cannot open a page takes no work.
  let imagesLoad = true;
  const ready = readiness(p, () => imagesLoad);
  if (runsApi && keys) {
    ({ app, port } = await serveApi(p, keys, effective, ready));
  } else {
    ({ workerServer, port } = await serveWorkerHttp(p, ready, () => stopping));
  }
  const apart = config.metricsPort === undefined ? null : metricsServer(metricsRoute);
  const metricsPort = apart && (await listen(apart, config.metricsPort ?? 0, config.host));
  if (metricsPort !== null) logger.info({ metricsPort, key: Boolean(config.metricsKey) }, 'serving /metrics apart');
  // The image library loads once the server answers, not before (src/document/sharp.ts). A failure is reported now,
  // not by the first job, and /readyz turns 503.
  if (engine) {
    loadSharp().catch((e: unknown) => {
      imagesLoad = false;
      report(e, { during: 'loading sharp' });
    });
  }

  return {
    role,
    port,
    app,
    engine,
    jobs,
    backends,
    metrics,
    metricsPort,
    logger,
    close: async () => {
      stopping = true;
      for (const stop of stops) stop();
      await app?.close();
      for (const server of [workerServer, apart]) {
        if (!server) continue;
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
      await backends.queue.close();
      await backends.close();
      if (engine && !opts.engine) await engine.close();
      await formulas?.close();
      await flushReports();
    },
  };
}

/** What an API instance that never loads the model says of it: its config, and the precision workers open it with. */
function apiBundle(config: ServerConfig): { config: BundleConfig; dir: string; device: string; precision: Precision } {
  const dir = config.model ?? DEFAULT_BUNDLE;
  const bundleConfig = readBundleConfig(dir);
  // Under auto each worker says which device it took (engine.stats.workers' device); the precision shown is the CPU's.
  const device = config.device === 'auto' ? 'cpu' : config.device;
  return {
    config: bundleConfig,
    dir,
    device: `workers (${config.device})`,
    precision: choosePrecision(bundleConfig, device, config.precision, dir),
  };
}
