/**
 * The distributed queue on BullMQ: retries with exponential backoff, stalled-job recovery (a worker that dies
 * mid-job loses its lock and the job goes back to waiting, for another worker), a per-tenant cap on jobs running
 * at once across all workers, and an optional global rate limit. Cancelling a running job is a message on a
 * Redis channel every worker listens to; the one running it aborts it. A stopping worker takes no new jobs, lets
 * its running ones finish for a grace period, then hands the rest back to waiting (no attempt spent).
 */
import { DelayedError, type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { type JobHandler, type JobQueue, LockLost, WorkerStopping } from './queue.js';
import { FAIL_FAST, type RedisStateReport, watchRedis } from './redis-connection.js';

// KEYS: the tenant's running set (member = job id, score = lease expiry ms), the tenant's recent starts (member =
// job id, score = start ms). ARGV: now, lease until, concurrency limit, job id, starts allowed per window (0 = no
// limit), window ms. Returns 1 when the job may run now; a renewal (the job already holds a lease) always may.
const LEASE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
local rate = tonumber(ARGV[5])
if rate > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[6]))
  if redis.call('ZCARD', KEYS[2]) >= rate then return 0 end
  redis.call('ZADD', KEYS[2], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[6]))
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) - now)
return 1
`;

export interface BullQueueOptions {
  url: string;
  prefix?: string;
  /** Tries per job, the first included. */
  attempts: number;
  /** Jobs of one tenant running at once, across all workers. */
  tenantConcurrency: number;
  /** Jobs of one tenant started per minute, across all workers (0 or absent: no limit). */
  tenantRatePerMinute?: number;
  /** A worker that stops renewing its lock for this long is taken to be dead. */
  lockMs?: number;
  /** Keep finished queue entries this long (the job record has its own retention). */
  retentionSeconds: number;
  /** At most `max` jobs started per `durationMs`, all workers together. */
  rateLimit?: { max: number; durationMs: number };
  /** On close, how long running jobs may go on before they are handed back to the queue (default 30 s). */
  shutdownGraceMs?: number;
  /** An API process: adding a job fails at once while Redis is gone (see redis-connection.ts). */
  failFast?: boolean;
  onRedisState?: RedisStateReport;
}

interface Payload {
  jobId: string;
  tenant?: string;
}

const QUEUE = 'specula-parse';

export class BullJobQueue implements JobQueue {
  private readonly queue: Queue<Payload>;
  private readonly redis: Redis;
  private worker: Worker<Payload> | null = null;
  private cancelListener: Redis | null = null;
  private readonly running = new Map<string, AbortController>();
  private readonly p: string;

  constructor(private readonly opts: BullQueueOptions) {
    this.p = opts.prefix ?? 'specula';
    this.redis = new Redis(opts.url, { maxRetriesPerRequest: null });
    watchRedis(this.redis, 'queue', opts.onRedisState);
    this.redis.defineCommand('speculaLease', { numberOfKeys: 2, lua: LEASE });
    // An API process adds jobs and must not wait on a Redis that is gone (BullMQ's advice for producers:
    // no offline queue); a worker's connections wait, as BullMQ's blocking commands need.
    this.queue = new Queue<Payload>(QUEUE, {
      connection: opts.failFast ? { url: opts.url, ...FAIL_FAST } : this.connection(),
      prefix: `${this.p}:bull`,
    });
    this.queue.on('error', (e: Error) => opts.onRedisState?.('queue', 'down', e));
  }

  private connection(): { url: string; maxRetriesPerRequest: null } {
    return { url: this.opts.url, maxRetriesPerRequest: null };
  }

  private cancelChannel = (): string => `${this.p}:cancel`;
  private tenantKey = (tenant: string): string => `${this.p}:tenant:${tenant}:running`;
  private startsKey = (tenant: string): string => `${this.p}:tenant:${tenant}:starts`;

  async enqueue(jobId: string, opts: { tenant?: string } = {}): Promise<void> {
    await this.queue.add(
      'parse',
      { jobId, ...(opts.tenant ? { tenant: opts.tenant } : {}) },
      {
        jobId,
        attempts: this.opts.attempts,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: this.opts.retentionSeconds },
        removeOnFail: { age: this.opts.retentionSeconds },
      },
    );
  }

  private async lease(tenant: string, jobId: string, ms: number): Promise<boolean> {
    const now = Date.now();
    const ok = await (this.redis as Redis & { speculaLease(...a: (string | number)[]): Promise<number> }).speculaLease(
      this.tenantKey(tenant),
      this.startsKey(tenant),
      now,
      now + ms,
      this.opts.tenantConcurrency,
      jobId,
      this.opts.tenantRatePerMinute ?? 0,
      60_000,
    );
    return ok === 1;
  }

  process(handler: JobHandler, concurrency: number): void {
    const lockMs = this.opts.lockMs ?? 30_000;
    this.cancelListener = new Redis(this.opts.url, { maxRetriesPerRequest: null });
    watchRedis(this.cancelListener, 'cancel', this.opts.onRedisState);
    void this.cancelListener.subscribe(this.cancelChannel());
    this.cancelListener.on('message', (_channel: string, jobId: string) => this.running.get(jobId)?.abort());
    this.worker = new Worker<Payload>(
      QUEUE,
      async (job: Job<Payload>, token?: string) => {
        const { jobId, tenant } = job.data;
        const leaseMs = lockMs * 2;
        if (tenant && !(await this.lease(tenant, jobId, leaseMs))) {
          // The tenant is at its cap (running or started this minute): try again shortly, without spending an attempt.
          await job.moveToDelayed(Date.now() + 500 + Math.floor(Math.random() * 500), token);
          throw new DelayedError();
        }
        const renew = tenant
          ? setInterval(() => void this.lease(tenant, jobId, leaseMs).catch(() => undefined), lockMs / 2)
          : undefined;
        const ctrl = new AbortController();
        this.running.set(jobId, ctrl);
        try {
          await handler(jobId, ctrl.signal, {
            attempt: job.attemptsMade + 1,
            attemptsLeft: this.opts.attempts - job.attemptsMade - 1,
            ...(tenant ? { tenant } : {}),
          });
        } catch (e) {
          if (!(e instanceof WorkerStopping)) throw e;
          // Back to waiting at once, for another worker, without spending an attempt: the job did nothing wrong.
          await job.moveToDelayed(Date.now(), token);
          throw new DelayedError();
        } finally {
          clearInterval(renew);
          if (this.running.get(jobId) === ctrl) this.running.delete(jobId);
          if (tenant) await this.redis.zrem(this.tenantKey(tenant), jobId).catch(() => undefined);
        }
      },
      {
        connection: this.connection(),
        prefix: `${this.p}:bull`,
        concurrency,
        lockDuration: lockMs,
        // A dead worker's job is moved back at the first stalled check after its lock expires (0.5 to 1 lock after
        // the death). Workers share one check per interval, so the first may come up to two intervals after the
        // expiry: an eighth of a lock keeps the takeover within 1.25 locks (a quarter measured 41.7 s for 30 s).
        stalledInterval: Math.max(250, Math.round(lockMs / 8)),
        maxStalledCount: Math.max(1, this.opts.attempts - 1),
        ...(this.opts.rateLimit
          ? { limiter: { max: this.opts.rateLimit.max, duration: this.opts.rateLimit.durationMs } }
          : {}),
      },
    );
    // Failures are the handler's to record; a worker-level error (Redis gone) is retried by BullMQ itself.
    this.worker.on('error', () => undefined);
    // A lock this worker could not renew in time (Redis froze or was slow past it), or a job of its own found
    // stalled: the job may be running elsewhere already, so this run stops, writing nothing more.
    const lost = (jobId: string): void => this.running.get(jobId)?.abort(new LockLost());
    this.worker.on('lockRenewalFailed', (jobIds: string[]) => jobIds.forEach(lost));
    this.worker.on('stalled', lost);
  }

  async cancel(jobId: string): Promise<boolean> {
    const job = await this.queue.getJob(jobId);
    if (!job) return false;
    const state = await job.getState();
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
      await job.remove().catch(() => undefined);
      return true;
    }
    await this.redis.publish(this.cancelChannel(), jobId);
    return state === 'active';
  }

  async depth(): Promise<number> {
    return this.queue.getWaitingCount();
  }

  async close(): Promise<void> {
    // The worker stops fetching at once and resolves when its running jobs have ended: finished within the grace
    // period, or handed back after it.
    const handBack = setTimeout(() => {
      for (const c of this.running.values()) c.abort(new WorkerStopping());
    }, this.opts.shutdownGraceMs ?? 30_000);
    await this.worker?.close();
    clearTimeout(handBack);
    await this.queue.close();
    this.cancelListener?.disconnect();
    this.redis.disconnect();
  }
}
