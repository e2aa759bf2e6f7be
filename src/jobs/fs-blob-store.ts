/**
 * Uploaded bytes on the local filesystem until a worker has read them (the embedded mode: one process, so the
 * disk it writes is the disk it reads). Files are named by job id in their own folder, created 0700.
 */
import { mkdirSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobStore } from './blob-store.js';

export const DEFAULT_BLOB_DIR = join(tmpdir(), 'specula-blobs');

export class FsBlobStore implements BlobStore {
  constructor(private readonly dir: string = DEFAULT_BLOB_DIR) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private path(jobId: string): string {
    if (!/^[\w-]+$/.test(jobId)) throw new Error(`not a job id: ${jobId}`);
    return join(this.dir, jobId);
  }

  async put(jobId: string, bytes: Uint8Array): Promise<void> {
    await writeFile(this.path(jobId), bytes, { mode: 0o600 });
  }

  async get(jobId: string): Promise<Uint8Array | null> {
    try {
      return new Uint8Array(await readFile(this.path(jobId)));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async delete(jobId: string): Promise<void> {
    await rm(this.path(jobId), { force: true });
  }
}
