/**
 * The embedded mode: one process, no services. In-memory store, queue, event log and blobs; the worker runs
 * here too. `startServer` builds everything from a config and serves it; tests call it with port 0.
 */
import { schema } from '../../schema/index.js';
import { DEFAULT_SOURCE_LIMITS } from '../document/source.js';
import { Engine } from '../engine/engine.js';
import { MemoryBlobStore } from '../jobs/blob-store.js';
import { type JobBackends, Jobs } from '../jobs/jobs.js';
import { MemoryEventLog } from '../jobs/memory-event-log.js';
import { MemoryJobQueue } from '../jobs/memory-queue.js';
import { MemoryJobStore } from '../jobs/memory-store.js';
import { urlFetcher } from '../resolvers/fetch-url.js';
import { startWorker } from '../worker/start-worker.js';
import { type App, createApp } from './app.js';
import { ApiKeys } from './auth.js';
import type { ServerConfig } from './config.js';
import { engineInfo } from './engine-info.js';
import { createLogger, type Logger } from './logger.js';
import { ServerMetrics } from './metrics.js';
import { createReporter, flushReports } from './sentry.js';

export interface RunningServer {
  app: App;
  port: number;
  engine: Engine;
  jobs: Jobs;
  metrics: ServerMetrics;
  logger: Logger;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** An engine already open (it is left open on close). */
  engine?: Engine;
  /** Replace embedded backends (tests inject failing ones to check that outages are masked and reported). */
  backends?: Partial<JobBackends>;
}

export async function startServer(config: ServerConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const keys = ApiKeys.fromConfig(config); // fails fast on a bad key list, before the model loads
  const report = createReporter(config.sentryDsn, logger);
  const engine = opts.engine ?? (await Engine.open(config.model, { device: config.device, maxBatch: config.maxBatch }));
  const backends: JobBackends = { store: new MemoryJobStore(), queue: new MemoryJobQueue(), events: new MemoryEventLog(), blobs: new MemoryBlobStore(), ...opts.backends };
  const jobs = new Jobs(backends);
  const metrics = new ServerMetrics({ queueDepth: () => backends.queue.depth(), engineLoad: () => ({ queued: engine.stats.queued, active: engine.stats.active }) });
  const unobserve = engine.observeForwards((o) => metrics.forward(o));
  const limits = { ...DEFAULT_SOURCE_LIMITS, maxPixels: config.limits.pixels, maxPages: config.limits.pages };
  startWorker({ engine, ...backends, limits, report: (e, jobId) => report(e, { jobId }) }, backends.queue, config.concurrency, {
    started: (jobId) => {
      metrics.jobStarted();
      logger.info({ jobId }, 'job started');
    },
    finished: (jobId, status, ms) => {
      metrics.jobFinished(status);
      logger.info({ jobId, status, ms: Math.round(ms) }, 'job finished');
    },
  });
  const app = createApp({
    schema,
    config,
    keys,
    jobs,
    engine: engineInfo(engine, metrics),
    fetchUrl: config.urlInput.enabled ? urlFetcher(config.urlInput.timeoutMs) : null,
    metrics,
    logger,
    report,
    ready: async () => {
      await backends.queue.depth();
      return true;
    },
  });
  const port = await app.listen();
  logger.info({ port, model: engine.bundle.config.name, device: engine.bundle.device, anonymous: keys.allowAnonymous, tenants: keys.size }, `serving http://localhost:${port}/graphql`);
  return {
    app,
    port,
    engine,
    jobs,
    metrics,
    logger,
    close: async () => {
      await app.close();
      await backends.queue.close();
      unobserve();
      if (!opts.engine) await engine.close();
      await flushReports();
    },
  };
}
