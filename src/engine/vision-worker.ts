/**
 * The vision session in a worker thread (see vision-runner.ts). It opens the session once from the bytes it is
 * given, says whether that worked, then runs one pixel batch per message and sends the outputs back, moving their
 * buffers rather than copying them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import type { VisionRequest, VisionResponse, VisionWorkerData } from './vision-runner.js';

const port = parentPort;
if (!port) throw new Error('vision-worker.js runs as a worker thread');
const data = workerData as VisionWorkerData;

let session: ort.InferenceSession;
try {
  session = await ort.InferenceSession.create(data.bytes, data.options);
  port.postMessage({ ready: true } satisfies VisionResponse);
} catch (e) {
  port.postMessage({ ready: false, error: (e as Error).message } satisfies VisionResponse);
  process.exit(0);
}

port.on('message', (req: VisionRequest | { close: true }) => {
  if ('close' in req) {
    // Release the session here, then let the thread end by itself: terminating a thread that still holds a
    // session aborts the whole process when onnxruntime's finalizers run.
    void session.release().finally(() => port.close());
    return;
  }
  void (async (): Promise<void> => {
    try {
      const out = await session.run({
        pixels: new ort.Tensor('float32', req.pixels, [req.batch, 1, req.height, req.width]),
        widths: new ort.Tensor('int64', req.widths, [req.batch]),
      });
      const k = out.vis_k.data as Float32Array;
      const v = out.vis_v.data as Float32Array;
      const mask = out.vis_mask.data as Float32Array;
      const ctcLogits = out.ctc_logits.data as Float32Array;
      const res: VisionResponse = { id: req.id, out: { k, v, mask, ctcLogits, visual: Number(out.vis_k.dims[3]) } };
      port.postMessage(res, [k.buffer, v.buffer, mask.buffer, ctcLogits.buffer] as ArrayBuffer[]);
    } catch (e) {
      port.postMessage({ id: req.id, error: (e as Error).message } satisfies VisionResponse);
    }
  })();
});
