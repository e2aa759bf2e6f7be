/**
 * Prometheus metrics at /metrics: jobs by outcome and their latency, pages' read time, queue depth and live
 * workers, lines in the engine, and per decoder forward its latency, batch size and tokens committed per line. One
 * registry per server (tests run several). docs/deploy.md lists every series; labels take only values of ours.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ForwardObservation } from '../engine/decode/scheduler.js';

export interface MetricSources {
  queueDepth(): Promise<number>;
  /** Workers whose heartbeat is live (the engine query's `stats.workers`). */
  liveWorkers(): Promise<number>;
  /** Where this process runs an engine. */
  engineLoad?: () => { queued: number; active: number };
}

/**
 * How long a scrape waits for the figures kept in the store (Redis) before answering without them: a frozen Redis
 * must not take the process's own metrics down with it.
 */
export const STORE_SCRAPE_MS = 1000;

interface StoreFigures {
  queueDepth: number;
  workers: number;
}

/** The promise's value, or null when it fails or has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
    timer.unref();
  });
  return Promise.race([p.catch(() => null), late]).finally(() => clearTimeout(timer));
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly jobsFinished: Counter;
  private readonly jobsStarted: Counter;
  private readonly forwardSeconds: Histogram;
  private readonly tokensPerForward: Histogram;
  private readonly batchRows: Histogram;
  private readonly jobSeconds: Histogram;
  private readonly pageSeconds: Histogram;
  /** The store's read still outstanding (one at a time, however many scrapes wait on a frozen Redis). */
  private reading: Promise<StoreFigures> | null = null;
  /** This scrape's figures, shared by the gauges that show them; null inside: the store did not answer in time. */
  private scrape: Promise<StoreFigures | null> | null = null;
  /** Totals for the engine query's live stats. */
  forwards = 0;
  committed = 0;
  rowForwards = 0;
  forwardMs = 0;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    // prom-client's names already say what they are (process_cpu_seconds_total, nodejs_heap_size_used_bytes).
    collectDefaultMetrics({ register: this.registry, prefix: 'specula_' });
    this.jobsStarted = new Counter({
      name: 'specula_jobs_started_total',
      help: 'Parse jobs a worker took up',
      registers,
    });
    this.jobsFinished = new Counter({
      name: 'specula_jobs_finished_total',
      help: 'Parse jobs finished, by status',
      labelNames: ['status'],
      registers,
    });
    const store = (): Promise<StoreFigures | null> => this.storeFigures(sources);
    new Gauge({
      name: 'specula_store_up',
      help: 'Whether the job store (Redis) answered this scrape (0: the gauges read from it are left out)',
      registers,
      async collect() {
        this.set((await store()) ? 1 : 0);
      },
    });
    for (const [name, help, figure] of [
      ['specula_queue_depth', 'Jobs waiting for a worker', 'queueDepth'],
      ['specula_workers', 'Workers whose heartbeat is live', 'workers'],
    ] as const)
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const f = await store();
          if (f) this.set(f[figure]);
          else this.remove(); // unknown while the store is away: no value rather than a stale one
        },
      });
    const engineLoad = sources.engineLoad;
    if (engineLoad)
      new Gauge({
        name: 'specula_engine_lines',
        help: 'Text lines in the engine, by state',
        labelNames: ['state'],
        registers,
        collect() {
          const load = engineLoad();
          this.set({ state: 'queued' }, load.queued);
          this.set({ state: 'active' }, load.active);
        },
      });
    this.forwardSeconds = new Histogram({
      name: 'specula_decoder_forward_seconds',
      help: 'Latency of one batched decoder forward',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
      registers,
    });
    this.tokensPerForward = new Histogram({
      name: 'specula_decoder_tokens_per_forward',
      help: 'Tokens committed per line per decoder forward (1 for plain greedy; more when drafts are accepted)',
      buckets: [1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32],
      registers,
    });
    this.batchRows = new Histogram({
      name: 'specula_decoder_batch_lines',
      help: 'Lines decoded together in one forward',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    });
    this.jobSeconds = new Histogram({
      name: 'specula_job_seconds',
      help: "Seconds from a job's submission to its end, by outcome (succeeded, failed, cancelled)",
      labelNames: ['outcome'],
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800],
      registers,
    });
    this.pageSeconds = new Histogram({
      name: 'specula_page_seconds',
      help: "Seconds from a page's rendering to its reading assembled (pages of a job overlap)",
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
      registers,
    });
  }

  private storeFigures(sources: MetricSources): Promise<StoreFigures | null> {
    if (!this.scrape) {
      this.reading ??= Promise.all([sources.queueDepth(), sources.liveWorkers()])
        .then(([queueDepth, workers]) => ({ queueDepth, workers }))
        .finally(() => {
          this.reading = null;
        });
      this.scrape = within(this.reading, STORE_SCRAPE_MS).finally(() => {
        this.scrape = null;
      });
    }
    return this.scrape;
  }

  forward(o: ForwardObservation): void {
    this.forwards++;
    this.forwardMs += o.ms;
    this.committed += o.committed;
    this.rowForwards += o.rows;
    this.forwardSeconds.observe(o.ms / 1000);
    this.batchRows.observe(o.rows);
    if (o.rows) this.tokensPerForward.observe(o.committed / o.rows);
  }

  jobStarted(): void {
    this.jobsStarted.inc();
  }

  /** A job's end as its worker saw it; `sinceSubmitMs` where the job is final (from the record's own times). */
  jobFinished(status: string, sinceSubmitMs?: number | null): void {
    this.jobsFinished.inc({ status });
    if (typeof sinceSubmitMs === 'number')
      this.jobSeconds.observe({ outcome: status }, Math.max(0, sinceSubmitMs) / 1000);
  }

  pageRead(ms: number): void {
    this.pageSeconds.observe(ms / 1000);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
