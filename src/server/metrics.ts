/**
 * Prometheus metrics at /metrics: jobs by outcome, queue depth, lines in the engine, and per decoder forward
 * its latency, batch size and tokens committed per line. One registry per server (tests run several).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ForwardObservation } from '../engine/decode/scheduler.js';

export interface MetricSources {
  queueDepth(): Promise<number>;
  /** Where this process runs an engine. */
  engineLoad?: () => { queued: number; active: number };
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly jobsFinished: Counter;
  private readonly jobsStarted: Counter;
  private readonly forwardSeconds: Histogram;
  private readonly tokensPerForward: Histogram;
  private readonly batchRows: Histogram;
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
    new Gauge({
      name: 'specula_queue_depth',
      help: 'Jobs waiting for a worker',
      registers,
      async collect() {
        this.set(await sources.queueDepth());
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

  jobFinished(status: string): void {
    this.jobsFinished.inc({ status });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
