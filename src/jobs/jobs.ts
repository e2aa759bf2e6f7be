/**
 * What the API may do with jobs, tenant-scoped throughout: submit bytes, read, list, cancel, and follow a job's
 * events. It knows the store, the queue, the blobs and the event log, and nothing of how a document is read.
 */
import { randomUUID } from 'node:crypto';
import type { BlobStore } from './blob-store.js';
import type { EventLog, Sequenced } from './events.js';
import { FINISHED, type JobError, type JobInput, type JobRecord } from './job-record.js';
import type { JobQueue } from './queue.js';
import type { JobPage, JobStore, ListDirection } from './store.js';

const CANCEL_WAIT_MS = 5000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface JobBackends {
  store: JobStore;
  queue: JobQueue;
  events: EventLog;
  blobs: BlobStore;
}

export class Jobs {
  constructor(readonly backends: JobBackends) {}

  /**
   * Store the bytes first, then the job becomes visible to workers. With an idempotency key, a retry (the
   * client never heard back: a timeout, a store outage) returns the job the key first made instead of another;
   * a first try that claimed the key but did not get as far as creating its job is created now, under its id.
   */
  async submit(tenant: string, input: JobInput, bytes: Uint8Array, idempotencyKey?: string): Promise<JobRecord> {
    const { store, blobs, queue } = this.backends;
    if (!tenant) throw new Error('a job needs a tenant'); // the API refuses keyless requests before this
    let id: string | undefined;
    if (idempotencyKey) {
      id = await store.claimKey(tenant, idempotencyKey, randomUUID());
      const first = await store.get(tenant, id);
      if (first) return first;
    }
    const job = await store.create(tenant, input, id);
    try {
      await blobs.put(job.id, bytes);
      await queue.enqueue(job.id, { tenant });
    } catch (e) {
      // Not queued after all: record it, so the job does not sit as QUEUED forever.
      const error: JobError = { code: 'INTERNAL', message: 'the job could not be queued' };
      if (await store.transition(job.id, ['queued'], { status: 'failed', error }).catch(() => null))
        await this.backends.events.publish(job.id, { type: 'failed', ...error }).catch(() => undefined);
      throw e;
    }
    return job;
  }

  get(tenant: string, id: string): Promise<JobRecord | null> {
    return this.backends.store.get(tenant, id);
  }

  getMany(tenant: string, ids: readonly string[]): Promise<(JobRecord | null)[]> {
    return this.backends.store.getMany(tenant, ids);
  }

  list(tenant: string, first: number, cursor?: string, direction?: ListDirection): Promise<JobPage> {
    return this.backends.store.list(tenant, first, cursor, direction);
  }

  /**
   * Cancel a tenant's job: a waiting one is cancelled here, a running one is signalled and its worker records
   * the cancellation when decoding stops (within one decoder step). Finished jobs are left as they are.
   * Returns the job as it stands, or null when this tenant has no such job.
   */
  async cancel(tenant: string, id: string): Promise<JobRecord | null> {
    const { store, queue, events } = this.backends;
    const job = await store.get(tenant, id);
    if (!job || FINISHED.includes(job.status)) return job;
    if (job.status === 'queued') {
      const cancelled = await store.transition(id, ['queued'], { status: 'cancelled' });
      if (cancelled) {
        await events.publish(id, { type: 'cancelled' }); // first: subscribers must hear the end whatever else fails
        await queue.cancel(id);
        await this.backends.blobs.delete(id);
        return cancelled;
      }
    }
    await queue.cancel(id); // running (or it just started): its worker sees the signal
    // Its worker stops within a decoder step; answer with the job as cancelled when that is quick.
    const deadline = Date.now() + CANCEL_WAIT_MS;
    for (;;) {
      const now = await store.get(tenant, id);
      if (!now || FINISHED.includes(now.status) || Date.now() > deadline) return now;
      await sleep(20);
    }
  }

  /** Replays the job's events after `afterSeq`, then follows live ones; null when this tenant has no such job. */
  async events(
    tenant: string,
    id: string,
    afterSeq = 0,
    signal?: AbortSignal,
  ): Promise<AsyncIterable<Sequenced> | null> {
    const job = await this.backends.store.get(tenant, id);
    if (!job) return null;
    return this.backends.events.subscribe(id, afterSeq, signal);
  }

  countActive(tenant: string): Promise<number> {
    return this.backends.store.countActive(tenant);
  }

  queueDepth(): Promise<number> {
    return this.backends.queue.depth();
  }
}
