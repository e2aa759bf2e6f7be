/**
 * Uploaded bytes on the local filesystem until a worker has read them (the embedded mode: one process, so the
 * disk it writes is the disk it reads). Each process keeps its files in a folder of its own under the root
 * (created 0700, named by its pid), removed on close; a folder whose process is gone (it crashed, or was killed
 * before closing) is removed by the next store that opens on the same root. The embedded job store lives in
 * memory, so such files belong to jobs nobody can ask for any more.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobStore } from './blob-store.js';

export const DEFAULT_BLOB_DIR = join(tmpdir(), 'specula-blobs');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // someone else's process: alive
  }
}

/** Remove the folders of processes that are gone. */
function sweepOrphans(root: string): void {
  for (const name of readdirSync(root)) {
    const m = /^pid-(\d+)-/.exec(name);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1])))
      rmSync(join(root, name), { recursive: true, force: true });
  }
}

export class FsBlobStore implements BlobStore {
  /** This process's own folder under the root. */
  readonly dir: string;

  constructor(root: string = DEFAULT_BLOB_DIR) {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    sweepOrphans(root);
    this.dir = mkdtempSync(join(root, `pid-${process.pid}-`));
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

  /** Remove this process's folder, with the uploads of jobs that never ran (they die with the in-memory store). */
  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
