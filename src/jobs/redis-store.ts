/**
 * Job records in Redis, for the distributed mode. A job is a hash whose fields are the record's top-level keys
 * (objects as JSON), so a status transition is one Lua script that compares `status` and writes fields, with no
 * JSON handled inside Redis. Each tenant has a sorted set of its jobs (newest first by a global counter) and a
 * set of its unfinished ones. Finished jobs expire after the retention period; index entries of expired jobs
 * are dropped when a listing meets them.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FINISHED, type JobInput, type JobRecord, type JobStatus, newJobRecord } from './job-record.js';
import type { JobPage, JobPatch, JobStore, ListDirection } from './store.js';

const FIELDS = [
  'id',
  'tenant',
  'status',
  'createdAt',
  'updatedAt',
  'input',
  'progress',
  'result',
  'error',
  'starts',
] as const;
const JSON_FIELDS = new Set(['input', 'progress', 'result', 'error', 'starts']);

// KEYS: job hash, tenant's active set. ARGV: allowed statuses (comma-joined), new status or '', retention seconds,
// job id, the `starts` the job must have ('': any), then field/value pairs. Returns 1 when applied.
const TRANSITION = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
local allowed = false
for s in string.gmatch(ARGV[1], '[^,]+') do if s == status then allowed = true end end
if not allowed then return 0 end
if ARGV[5] ~= '' and (redis.call('HGET', KEYS[1], 'starts') or '0') ~= ARGV[5] then return 0 end
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local finished = ARGV[2] == 'succeeded' or ARGV[2] == 'failed' or ARGV[2] == 'cancelled'
if finished then
  redis.call('SREM', KEYS[2], ARGV[4])
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
end
return 1
`;

export interface RedisStoreOptions {
  prefix?: string;
  /** Seconds a finished job (and its result) is kept. */
  retentionSeconds: number;
}

export class RedisJobStore implements JobStore {
  private readonly p: string;

  constructor(
    private readonly redis: Redis,
    private readonly opts: RedisStoreOptions,
  ) {
    this.p = opts.prefix ?? 'specula';
    redis.defineCommand('speculaTransition', { numberOfKeys: 2, lua: TRANSITION });
  }

  private jobKey = (id: string): string => `${this.p}:job:${id}`;
  private indexKey = (tenant: string): string => `${this.p}:tenant:${tenant}:jobs`;
  private activeKey = (tenant: string): string => `${this.p}:tenant:${tenant}:active`;

  private static encode(patch: Partial<JobRecord>): string[] {
    const out: string[] = [];
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) continue;
      out.push(k, JSON_FIELDS.has(k) ? JSON.stringify(v) : String(v));
    }
    return out;
  }

  private static decode(h: Record<string, string>): JobRecord | null {
    if (!h.id) return null;
    const rec: Record<string, unknown> = {};
    for (const f of FIELDS) if (h[f] !== undefined) rec[f] = JSON_FIELDS.has(f) ? JSON.parse(h[f]) : h[f];
    return rec as unknown as JobRecord;
  }

  async claimKey(tenant: string, key: string, id: string): Promise<string> {
    // Hashed: a client's key may be long or hold anything; the claim is the tenant's alone.
    const k = `${this.p}:tenant:${tenant}:idempotency:${createHash('sha256').update(key).digest('hex')}`;
    const set = await this.redis.set(k, id, 'EX', this.opts.retentionSeconds, 'NX');
    return set === 'OK' ? id : ((await this.redis.get(k)) ?? id);
  }

  async create(tenant: string, input: JobInput, id: string = randomUUID()): Promise<JobRecord> {
    const job = newJobRecord(tenant, input, id);
    const order = await this.redis.incr(`${this.p}:job-order`);
    await this.redis
      .multi()
      .hset(this.jobKey(job.id), ...RedisJobStore.encode(job), 'order', String(order))
      .zadd(this.indexKey(tenant), order, job.id)
      .sadd(this.activeKey(tenant), job.id)
      .exec();
    return job;
  }

  async load(id: string): Promise<JobRecord | null> {
    return RedisJobStore.decode(await this.redis.hgetall(this.jobKey(id)));
  }

  async get(tenant: string, id: string): Promise<JobRecord | null> {
    const job = await this.load(id);
    return job && job.tenant === tenant ? job : null;
  }

  async getMany(tenant: string, ids: readonly string[]): Promise<(JobRecord | null)[]> {
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.hgetall(this.jobKey(id));
    const res = (await pipe.exec()) ?? [];
    // A pipeline reports each command's failure in its entry, not by rejecting: a timed-out read is not a missing job.
    for (const [err] of res) if (err) throw err;
    return res.map(([, h]) => {
      const job = RedisJobStore.decode((h ?? {}) as Record<string, string>);
      return job && job.tenant === tenant ? job : null;
    });
  }

  async countActive(tenant: string): Promise<number> {
    return this.redis.scard(this.activeKey(tenant));
  }

  async list(tenant: string, first: number, cursor?: string, direction: ListDirection = 'older'): Promise<JobPage> {
    const index = this.indexKey(tenant);
    const older = direction === 'older';
    // Scores are creation times: older jobs walk the index down from the cursor, newer ones up from it.
    let bound = older ? '+inf' : '-inf';
    if (cursor) {
      const score = await this.redis.zscore(index, cursor);
      if (score === null) return { jobs: [], endCursor: null, hasNextPage: false }; // unknown (or expired) cursor
      bound = `(${score}`;
    }
    const range = (from: string, want: number): Promise<string[]> =>
      older
        ? this.redis.zrevrangebyscore(index, from, '-inf', 'WITHSCORES', 'LIMIT', 0, want)
        : this.redis.zrangebyscore(index, from, '+inf', 'WITHSCORES', 'LIMIT', 0, want);
    const jobs: JobRecord[] = []; // nearest the cursor first
    let hasNextPage = false;
    // Expired jobs leave index entries behind; skip (and drop) them until the page is full.
    for (;;) {
      const want = first + 1 - jobs.length;
      const ids = await range(bound, want);
      if (!ids.length) break;
      const pairs: [string, string][] = [];
      for (let i = 0; i < ids.length; i += 2) pairs.push([ids[i], ids[i + 1]]);
      const found = await this.getMany(
        tenant,
        pairs.map(([id]) => id),
      );
      const gone = pairs.filter((_, i) => !found[i]).map(([id]) => id);
      if (gone.length) await this.redis.zrem(index, ...gone);
      for (const job of found) if (job) jobs.push(job);
      bound = `(${pairs[pairs.length - 1][1]}`;
      if (jobs.length > first) {
        hasNextPage = true;
        jobs.length = first;
        break;
      }
      if (pairs.length < want) break; // the index has no more
    }
    const endCursor = jobs.length ? jobs[jobs.length - 1].id : null;
    return { jobs: older ? jobs : jobs.reverse(), endCursor, hasNextPage };
  }

  async update(id: string, patch: JobPatch): Promise<JobRecord> {
    const all = [...FINISHED, 'queued', 'running'] as JobStatus[];
    const job = await this.transition(id, all, patch);
    if (!job) throw new Error(`no job ${id}`);
    return job;
  }

  async transition(
    id: string,
    from: readonly JobStatus[],
    patch: JobPatch,
    starts?: number,
  ): Promise<JobRecord | null> {
    const current = await this.redis.hget(this.jobKey(id), 'tenant');
    if (current === null) return null;
    const fields = RedisJobStore.encode({ ...patch, updatedAt: new Date().toISOString() });
    const applied = await (
      this.redis as Redis & { speculaTransition(...args: (string | number)[]): Promise<number> }
    ).speculaTransition(
      this.jobKey(id),
      this.activeKey(current),
      from.join(','),
      patch.status ?? '',
      this.opts.retentionSeconds,
      id,
      starts === undefined ? '' : JSON.stringify(starts),
      ...fields,
    );
    return applied ? this.load(id) : null;
  }
}
