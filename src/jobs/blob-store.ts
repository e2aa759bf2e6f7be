/** The uploaded bytes of a job, kept until a worker has read them; and outputs too big for the job record (keys derived
 * from the job id: letters, digits, "-" and "_").
 */
export interface BlobStore {
  put(jobId: string, bytes: Uint8Array): Promise<void>;
  get(jobId: string): Promise<Uint8Array | null>;
  delete(jobId: string): Promise<void>;
}

export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, Uint8Array>();

  async put(jobId: string, bytes: Uint8Array): Promise<void> {
    this.blobs.set(jobId, bytes);
  }

  async get(jobId: string): Promise<Uint8Array | null> {
    return this.blobs.get(jobId) ?? null;
  }

  async delete(jobId: string): Promise<void> {
    this.blobs.delete(jobId);
  }
}
