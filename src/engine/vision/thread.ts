/**
 * A vision thread started before its graph is known. Starting a worker thread is Node's own start again plus
 * onnxruntime's load, some 300 ms of one core here; begun first thing by the commands that will open an engine
 * (cli/main.ts), it runs beside the command's own modules instead of after them, and the first vision thread the
 * engine opens (vision/runner.ts) takes it and sends it its graph.
 */
import { Worker } from 'node:worker_threads';

/** A spare nobody took by then is stopped: a command that ended up not opening an engine holds no idle thread. */
const SPARE_TTL_MS = 15_000;

let spare: Worker | null = null;

/** The vision worker's module, beside this one in dist/src/engine and in dist/bundle alike. */
export const VISION_WORKER_URL = new URL('./vision-worker.js', import.meta.url);

export function startSpareVisionThread(): void {
  if (spare) return;
  const worker = new Worker(VISION_WORKER_URL, { workerData: null });
  // It keeps no process alive: a command that fails its arguments exits as it would without it.
  worker.unref();
  const gone = (): void => {
    if (spare === worker) spare = null;
  };
  worker.once('error', gone);
  worker.once('exit', gone);
  const ttl = setTimeout(() => {
    if (spare === worker) {
      spare = null;
      worker.postMessage({ close: true });
    }
  }, SPARE_TTL_MS);
  ttl.unref();
  spare = worker;
}

/**
 * Stop a spare thread nobody took (a command that failed before it opened a bundle), and wait until it has: a
 * process that exits while the thread still loads onnxruntime can die of a signal instead of its own exit code.
 */
export async function closeSpareVisionThread(waitMs = 10_000): Promise<void> {
  const w = takeSpareVisionThread();
  if (!w) return;
  const exited = new Promise<void>((resolve) => {
    w.once('exit', () => resolve());
    w.once('error', () => resolve());
  });
  w.postMessage({ close: true });
  const timer = setTimeout(() => void w.terminate(), waitMs);
  timer.unref();
  await exited;
  clearTimeout(timer);
}

/** The spare thread, at most once; null when none was started or it has gone. */
export function takeSpareVisionThread(): Worker | null {
  const w = spare;
  spare = null;
  return w;
}
