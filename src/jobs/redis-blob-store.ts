/**
 * Uploaded bytes in Redis, for the distributed mode (an API instance's disk is not a worker's). Each blob is one
 * string key with an expiry, so an upload whose job never runs does not stay forever. Redis holds every value
 * in memory: the size limit (default 32 MiB) keeps one upload from crowding out the queue; larger documents
 * need object storage behind this same interface.
 */
import type { Redis } from 'ioredis';
import type { BlobStore } from './blob-store.js';

export class BlobTooLargeError extends Error {
  readonly code = 'UPLOAD_TOO_LARGE';
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`the document is ${size} bytes; this deployment keeps uploads of at most ${limit} bytes`);
  }
}

export class RedisBlobStore implements BlobStore {
  private readonly p: string;

  constructor(
    private readonly redis: Redis,
    private readonly opts: { prefix?: string; maxBytes: number; ttlSeconds: number },
  ) {
    this.p = opts.prefix ?? 'specula';
  }

  private key = (jobId: string): string => `${this.p}:blob:${jobId}`;

  async put(jobId: string, bytes: Uint8Array): Promise<void> {
    if (bytes.length > this.opts.maxBytes) throw new BlobTooLargeError(bytes.length, this.opts.maxBytes);
    await this.redis.set(
      this.key(jobId),
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
      'EX',
      this.opts.ttlSeconds,
    );
  }

  async get(jobId: string): Promise<Uint8Array | null> {
    const b = await this.redis.getBuffer(this.key(jobId));
    return b ? new Uint8Array(b) : null;
  }

  async delete(jobId: string): Promise<void> {
    await this.redis.del(this.key(jobId));
  }
}
