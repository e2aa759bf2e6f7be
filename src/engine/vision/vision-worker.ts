/**
 * The vision session in a worker thread (see vision/runner.ts). It checks its graph's file (given when
 * it starts, or in its first message when it was started as a spare), opens the session once, says whether that
 * worked, then per message packs the crops into pixels, runs the pass, works out the CTC head's greedy readings
 * (and its log-probabilities, where an older graph gives logits), and sends the outputs back, moving their buffers
 * rather than copying them. Asked to, it checks the bundle's other files (VisionRunner.check).
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { checkFile } from '../bundle/file.js';
import { FloatPool } from '../decode/float-pool.js';
import { EngineError } from '../errors.js';
import {
  type CheckRequest,
  inputOf,
  runVisionSession,
  type VisionRequest,
  type VisionResponse,
  type VisionWorkerData,
} from './runner.js';

const port = parentPort;
if (!port) throw new Error('vision-worker.js runs as a worker thread');
// A spare thread (vision/thread.ts) starts without its graph: its first message brings it, or stops the thread.
const data =
  (workerData as VisionWorkerData | null) ??
  (await new Promise<VisionWorkerData>((resolve) => {
    port.once('message', (m: { open: VisionWorkerData } | { close: true }) =>
      'open' in m ? resolve(m.open) : process.exit(0),
    );
  }));

let session: ort.InferenceSession;
try {
  checkFile(data.file);
  session = await ort.InferenceSession.create(data.file.path, data.options);
  port.postMessage({ ready: true } satisfies VisionResponse);
} catch (e) {
  const code = e instanceof EngineError ? { code: e.code } : {};
  port.postMessage({ ready: false, error: (e as Error).message, ...code } satisfies VisionResponse);
  process.exit(0);
}

/**
 * Passes still running. Close waits for them: a session released under a running pass is freed memory the pass
 * still writes to (passes outside the scheduler, such as a page's orientation check, can be running when the
 * engine closes).
 */
const running = new Set<Promise<void>>();

/**
 * The pixels of every pass are packed into one buffer, kept and grown (eight 1,600 px lines: 1.6 MB). A fresh array
 * each pass was garbage once the pass ran, left for a collection this thread's small heap seldom calls for: the CLI's
 * peak over six docbank pages was 5-15 MB higher (paired runs). So passes run one after another, each packed only
 * once the one before has run (the thread ran them one at a time anyway: onnxruntime's run is synchronous).
 */
const pixels = new FloatPool(0);
let last: Promise<void> = Promise.resolve();

port.on('message', (req: VisionRequest | CheckRequest | { close: true }) => {
  if ('check' in req) {
    // The bundle's other files, checked here while the main thread builds the decoder's session (bundle.ts).
    try {
      for (const f of req.check) checkFile(f);
      port.postMessage({ id: req.id, checked: true } satisfies VisionResponse);
    } catch (e) {
      const code = e instanceof EngineError ? { code: e.code, ...(e.file ? { path: e.file } : {}) } : {};
      port.postMessage({ id: req.id, error: (e as Error).message, ...code } satisfies VisionResponse);
    }
    return;
  }
  if ('close' in req) {
    // Release the session here, then let the thread end by itself: terminating a thread that still holds a
    // session aborts the whole process when onnxruntime's finalizers run.
    void Promise.allSettled(running)
      .then(() => session.release())
      .finally(() => port.close());
    return;
  }
  const pass = last.then(async (): Promise<void> => {
    try {
      const out = await runVisionSession(session, inputOf(req, data.head.spec.height), data.head, (n) =>
        pixels.scratch('pixels', n),
      );
      const res: VisionResponse = { id: req.id, out };
      port.postMessage(res, [out.k.buffer, out.v.buffer, out.mask.buffer, out.ctcLogProbs.buffer] as ArrayBuffer[]);
    } catch (e) {
      port.postMessage({ id: req.id, error: (e as Error).message } satisfies VisionResponse);
    }
  });
  last = pass;
  running.add(pass);
  void pass.finally(() => running.delete(pass));
});
