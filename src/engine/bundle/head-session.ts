/**
 * A drafter head's session (mtp.onnx, pmtp.onnx), built the first time a request drafts with it: most requests never
 * do, and building both cost every start some 35 ms of the main thread, and their memory, for nothing. Its file is
 * checked when the bundle opens (by the vision thread: loadBundle), so a missing or altered head still fails the open
 * by name; onnxruntime reads it from its path when it is built, as it does the decoder's.
 */
import type * as ort from 'onnxruntime-node';

export class HeadSession {
  private opening: Promise<ort.InferenceSession> | null = null;

  constructor(private readonly build: () => Promise<ort.InferenceSession>) {}

  session(): Promise<ort.InferenceSession> {
    if (!this.opening) {
      const opening = Promise.resolve().then(() => this.build());
      // A head that fails to build fails the drafts that asked for it; the next draft tries again.
      opening.catch(() => {
        if (this.opening === opening) this.opening = null;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  async release(): Promise<void> {
    const opening = this.opening;
    this.opening = null;
    if (opening) await (await opening.catch(() => null))?.release();
  }
}
