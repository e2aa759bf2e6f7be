/**
 * Live engine figures of the workers that are up, for the `engine { stats }` query: each worker reports every
 * few seconds; a report older than its expiry means the worker is gone. In one process there is one worker.
 */
import type { Redis } from 'ioredis';

export interface WorkerStats {
  worker: string;
  device: string;
  queuedLines: number;
  activeLines: number;
  maxBatch: number;
  /** Totals since the worker started. */
  forwards: number;
  committed: number;
  rowForwards: number;
  forwardMs: number;
}

export interface Fleet {
  report(stats: WorkerStats): Promise<void>;
  workers(): Promise<WorkerStats[]>;
}

export class MemoryFleet implements Fleet {
  private readonly seen = new Map<string, WorkerStats>();

  async report(stats: WorkerStats): Promise<void> {
    this.seen.set(stats.worker, stats);
  }

  async workers(): Promise<WorkerStats[]> {
    return [...this.seen.values()];
  }
}

export class RedisFleet implements Fleet {
  constructor(
    private readonly redis: Redis,
    private readonly opts: { prefix?: string; ttlSeconds: number },
  ) {}

  private get setKey(): string {
    return `${this.opts.prefix ?? 'specula'}:workers`;
  }

  private key = (worker: string): string => `${this.setKey}:${worker}`;

  async report(stats: WorkerStats): Promise<void> {
    await this.redis
      .multi()
      .set(this.key(stats.worker), JSON.stringify(stats), 'EX', this.opts.ttlSeconds)
      .sadd(this.setKey, stats.worker)
      .exec();
  }

  async workers(): Promise<WorkerStats[]> {
    const ids = await this.redis.smembers(this.setKey);
    if (!ids.length) return [];
    const raw = await this.redis.mget(ids.map(this.key));
    const gone = ids.filter((_, i) => raw[i] === null);
    if (gone.length) await this.redis.srem(this.setKey, ...gone);
    return raw.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as WorkerStats);
  }
}
