/** The embedded job store: a map in this process, for the default no-services mode. */
import { randomUUID } from 'node:crypto';
import { type JobInput, type JobRecord, type JobStatus, newJobRecord } from './job-record.js';
import type { JobPage, JobPatch, JobStore, ListDirection } from './store.js';

export class MemoryJobStore implements JobStore {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly order: string[] = []; // creation order
  private readonly keys = new Map<string, string>(); // tenant + idempotency key -> job id

  async claimKey(tenant: string, key: string, id: string): Promise<string> {
    const k = `${tenant}\u0000${key}`;
    if (!this.keys.has(k)) this.keys.set(k, id);
    return this.keys.get(k) as string;
  }

  async create(tenant: string, input: JobInput, id: string = randomUUID()): Promise<JobRecord> {
    const job = newJobRecord(tenant, input, id);
    this.jobs.set(job.id, job);
    this.order.push(job.id);
    return structuredClone(job);
  }

  async get(tenant: string, id: string): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    return job && job.tenant === tenant ? structuredClone(job) : null;
  }

  async countActive(tenant: string): Promise<number> {
    let n = 0;
    for (const job of this.jobs.values())
      if (job.tenant === tenant && (job.status === 'queued' || job.status === 'running')) n++;
    return n;
  }

  async getMany(tenant: string, ids: readonly string[]): Promise<(JobRecord | null)[]> {
    return Promise.all(ids.map((id) => this.get(tenant, id)));
  }

  async load(id: string): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    return job ? structuredClone(job) : null;
  }

  async list(tenant: string, first: number, cursor?: string, direction: ListDirection = 'older'): Promise<JobPage> {
    const mine = [...this.order].reverse().filter((id) => this.jobs.get(id)?.tenant === tenant);
    const at = cursor ? mine.indexOf(cursor) : -1;
    if (cursor && at < 0) return { jobs: [], endCursor: null, hasNextPage: false }; // unknown cursor
    const older = direction === 'older';
    const start = older ? (cursor ? at + 1 : 0) : Math.max(0, (cursor ? at : mine.length) - first);
    const end = older ? start + first : cursor ? at : mine.length;
    const ids = mine.slice(start, end);
    return {
      jobs: ids.map((id) => structuredClone(this.jobs.get(id) as JobRecord)),
      endCursor: ids.length ? (older ? ids[ids.length - 1] : ids[0]) : null,
      hasNextPage: older ? end < mine.length : start > 0,
    };
  }

  /** Forget jobs that finished before `before` (ISO time); returns their ids (their events can go too). */
  sweep(before: string): string[] {
    const gone: string[] = [];
    for (const [id, job] of this.jobs) {
      if (
        (job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled') &&
        job.updatedAt < before
      ) {
        this.jobs.delete(id);
        gone.push(id);
      }
    }
    if (gone.length) {
      const set = new Set(gone);
      const keep = this.order.filter((id) => !set.has(id));
      this.order.length = 0;
      this.order.push(...keep);
    }
    return gone;
  }

  async transition(
    id: string,
    from: readonly JobStatus[],
    patch: JobPatch,
    starts?: number,
  ): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    if (!job || !from.includes(job.status)) return null;
    if (starts !== undefined && (job.starts ?? 0) !== starts) return null;
    return this.update(id, patch);
  }

  async update(id: string, patch: JobPatch): Promise<JobRecord> {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`no job ${id}`);
    Object.assign(job, structuredClone(patch), { updatedAt: new Date().toISOString() });
    return structuredClone(job);
  }
}
