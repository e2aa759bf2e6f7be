/**
 * The job backends for a mode: in-process ones (the default, no services), or Redis ones when a Redis URL is
 * given (store, BullMQ queue, event log with pub/sub, blobs, the fleet's live stats). Both modes run the same
 * API, worker and engine code.
 */
import { MemoryBlobStore } from './blob-store.js';
import { type Fleet, MemoryFleet } from './fleet.js';
import { FsBlobStore } from './fs-blob-store.js';
import { searchablePdfKey } from './job-record.js';
import type { JobBackends } from './jobs.js';
import { MemoryEventLog } from './memory-event-log.js';
import { MemoryJobQueue } from './memory-queue.js';
import { MemoryJobStore } from './memory-store.js';
import { FAIL_FAST, type RedisStateReport, watchRedis } from './redis-connection.js';

export interface BackendSettings {
  redisUrl?: string;
  /** Embedded mode: where uploads wait on disk (null: in memory). */
  blobDir?: string | null;
  redisBlobMaxBytes: number;
  retentionSeconds: number;
  jobAttempts: number;
  tenantConcurrency: number;
  tenantRatePerMinute?: number;
  lockMs: number;
  shutdownGraceMs?: number;
  prefix?: string;
  /**
   * An API process: a Redis command fails within about STORE_TIMEOUT_MS instead of waiting for Redis to come
   * back, so a request gets STORE_UNAVAILABLE, not a hang (and a job the client gave up on is not created later).
   * A worker waits: its jobs go on where they were when Redis returns.
   */
  failFast?: boolean;
  /** Redis connection trouble, once per outage per connection (and when it is back), for the JSON log. */
  onRedisState?: RedisStateReport;
}

export interface Backends extends JobBackends {
  fleet: Fleet;
  mode: 'embedded' | 'redis';
  /** Redis answers (embedded: always true). */
  ping(): Promise<boolean>;
  /** Close connections; the queue is closed first, on its own (it stops the workers). */
  close(): Promise<void>;
}

/**
 * The backends for these settings. The Redis ones (ioredis, BullMQ, the Redis event target) are imported only
 * when asked for: an embedded server never loads them, and starts that much sooner (about 0.3 s on two cores).
 */
export async function createBackends(s: BackendSettings): Promise<Backends> {
  if (!s.redisUrl) {
    const store = new MemoryJobStore();
    const events = new MemoryEventLog();
    // Finished jobs, their results and events are kept for the retention period, as Redis keeps them.
    const blobs = s.blobDir === null ? new MemoryBlobStore() : new FsBlobStore(s.blobDir);
    const sweep = setInterval(
      () => {
        for (const id of store.sweep(new Date(Date.now() - s.retentionSeconds * 1000).toISOString())) {
          events.drop(id);
          void blobs.delete(searchablePdfKey(id)).catch(() => undefined); // an output kept with its job goes with it
        }
      },
      Math.min(60_000, s.retentionSeconds * 1000),
    );
    sweep.unref();
    return {
      mode: 'embedded',
      store,
      queue: new MemoryJobQueue(),
      events,
      blobs,
      fleet: new MemoryFleet(),
      ping: async () => true,
      close: async () => {
        clearInterval(sweep);
        if (blobs instanceof FsBlobStore) await blobs.close();
      },
    };
  }
  const [{ Redis }, { BullJobQueue }, { RedisFleet }, { RedisBlobStore }, { RedisEventLog }, { RedisJobStore }] =
    await Promise.all([
      import('ioredis'),
      import('./bullmq-queue.js'),
      import('./fleet.js'),
      import('./redis-blob-store.js'),
      import('./redis-event-log.js'),
      import('./redis-store.js'),
    ]);
  // ioredis reconnects on its own. A worker's commands wait meanwhile (no per-request retry cap); an API's fail:
  // not queued while Redis is unreachable, and timed out when it is reachable but does not answer (frozen).
  const options = s.failFast ? FAIL_FAST : { maxRetriesPerRequest: null };
  const redis = new Redis(s.redisUrl, options);
  const subscriber = new Redis(s.redisUrl, { maxRetriesPerRequest: null });
  watchRedis(redis, 'store', s.onRedisState);
  watchRedis(subscriber, 'events', s.onRedisState);
  // Without an offline queue, a command sent before the first connection is up fails: wait for it (a while).
  if (s.failFast && redis.status !== 'ready') {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, 10_000);
      redis.once('ready', done);
    });
  }
  const queue = new BullJobQueue({
    url: s.redisUrl,
    prefix: s.prefix,
    attempts: s.jobAttempts,
    tenantConcurrency: s.tenantConcurrency,
    tenantRatePerMinute: s.tenantRatePerMinute,
    lockMs: s.lockMs,
    retentionSeconds: s.retentionSeconds,
    ...(s.shutdownGraceMs !== undefined ? { shutdownGraceMs: s.shutdownGraceMs } : {}),
    ...(s.failFast ? { failFast: true } : {}),
    ...(s.onRedisState ? { onRedisState: s.onRedisState } : {}),
  });
  return {
    mode: 'redis',
    store: new RedisJobStore(redis, { prefix: s.prefix, retentionSeconds: s.retentionSeconds }),
    queue,
    events: new RedisEventLog(redis, subscriber, { prefix: s.prefix, retentionSeconds: s.retentionSeconds }),
    blobs: new RedisBlobStore(redis, {
      prefix: s.prefix,
      maxBytes: s.redisBlobMaxBytes,
      ttlSeconds: s.retentionSeconds,
    }),
    fleet: new RedisFleet(redis, { prefix: s.prefix, ttlSeconds: 10 }),
    ping: async () => (await redis.ping()) === 'PONG', // fails fast in an API process
    close: async () => {
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
