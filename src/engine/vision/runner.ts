/**
 * Where the vision pass runs. On CPU it runs in a worker thread with its own onnxruntime session:
 * onnxruntime-node runs a session on the calling thread, so on the main thread a page's vision pass (hundreds of
 * milliseconds) would stop the decoder's steps, and the server's answers, for that long. In a worker it overlaps
 * the decoding of lines already in the batch. On a GPU (WebGPU, CUDA) the session stays in-process: the GPU does the
 * work, and onnxruntime's GPU providers belong to the process's main thread.
 */
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { type CtcReading, ctcGreedyFrames, ctcLogSoftmax } from '../ctc/head.js';
import { type BundleFile, checkFile } from '../bundle/file.js';
import { EngineError, type EngineErrorCode } from '../errors.js';
import { takeSpareVisionThread, VISION_WORKER_URL } from './thread.js';
import { type GrayCrop, type ImageSpec, type PixelBatch, packBatch } from './preprocess.js';

/**
 * The vision graph's outputs for one batch: visual K/V [L, B, H, V, dh], mask [B, V], the CTC head's
 * log-probabilities [B, V, vocab] (over each row's real frames) and each row's greedy CTC reading.
 */
export interface VisionOutputs {
  k: Float32Array;
  v: Float32Array;
  mask: Float32Array;
  ctcLogProbs: Float32Array;
  visual: number;
  reads: CtcReading[];
}

/**
 * What a pass reads: line crops (checked by the caller; packed into pixels where the pass runs, so the
 * normalisation's work is not the main thread's either) with, for a region bundle, each crop's line in its region;
 * or pixels packed already (the golden check's inputs).
 */
export type VisionInput = { crops: readonly GrayCrop[]; lines?: readonly number[] } | { pixels: PixelBatch };

/** What the pass needs of the bundle besides its graph: how crops are packed, and the CTC head's blank. */
export interface VisionHead {
  spec: ImageSpec;
  blank: number;
}

export interface VisionRunner {
  run(input: VisionInput): Promise<VisionOutputs>;
  /**
   * Read the bundle's other files and check them against their digests (checkFile), where the pass runs: the
   * worker thread is idle once its session is built, while the main thread is still busy starting up.
   */
  check(files: readonly BundleFile[]): Promise<void>;
  release(): Promise<void>;
}

/** What the worker thread is started with: it reads and checks the graph itself (again on a restart). */
export interface VisionWorkerData {
  file: BundleFile;
  options: ort.InferenceSession.SessionOptions;
  head: VisionHead;
}

/** A pass's input as a message: crops as their widths and their bytes back to back in one buffer, moved, not copied. */
export type VisionRequest = { id: number } & (
  { widths: number[]; data: Uint8Array; lines?: number[] } | { pixels: PixelBatch }
);

/** Files to check (VisionRunner.check). */
export interface CheckRequest {
  id: number;
  check: BundleFile[];
}

/**
 * A worker that could not start says why, and so does a failed request: with the engine's code where a bundle file
 * was refused. A check that passed answers with its id alone.
 */
export type VisionResponse =
  | { ready: true }
  | { ready: false; error: string; code?: EngineErrorCode }
  | { id: number; out: VisionOutputs }
  | { id: number; checked: true }
  | { id: number; error: string; code?: EngineErrorCode; path?: string };

/** The answer to one request. */
type Answer = Extract<VisionResponse, { id: number }>;

/** The crops of a request, as views of its one buffer. */
function cropsOf(req: { widths: number[]; data: Uint8Array }, height: number): GrayCrop[] {
  let at = 0;
  return req.widths.map((width) => ({ width, height, data: req.data.subarray(at, (at += width * height)) }));
}

/** A request as the pass's input again: its crops as views of its one buffer, or its pixels. */
export function inputOf(req: VisionRequest, height: number): VisionInput {
  if ('pixels' in req) return { pixels: req.pixels };
  return { crops: cropsOf(req, height), ...(req.lines ? { lines: req.lines } : {}) };
}

/** [B, vocab] as one array per row. */
function rowsOf(x: Float32Array, batch: number): Float32Array[] {
  const n = x.length / batch;
  return Array.from({ length: batch }, (_, b) => x.slice(b * n, (b + 1) * n));
}

/**
 * One vision pass on a session, wherever the session lives (this thread or the worker): crops are packed here, into
 * the buffer `into` gives where the caller keeps one.
 */
export async function runVisionSession(
  session: ort.InferenceSession,
  input: VisionInput,
  head: VisionHead,
  into?: (length: number) => Float32Array,
): Promise<VisionOutputs> {
  const px: PixelBatch = 'pixels' in input ? input.pixels : packBatch(input.crops, head.spec, input.lines, into);
  const height = head.spec.height;
  const feeds: Record<string, ort.Tensor> = {
    pixels: new ort.Tensor('float32', px.pixels, [px.batch, 1, height, px.width]),
    widths: new ort.Tensor('int64', px.widths, [px.batch]),
  };
  // A region bundle's vision graph takes each crop's line index (a lone line is line 0 of its region).
  if (session.inputNames.includes('lines'))
    feeds.lines = new ort.Tensor('int64', px.lines ?? new BigInt64Array(px.batch), [px.batch]);
  else if (px.lines?.some((l) => l !== 0n))
    throw new EngineError('INVALID_CROP', 'this bundle reads single lines, not multi-line regions');
  const out = await session.run(feeds);
  const visual = Number(out.vis_k.dims[3]);
  const mask = out.vis_mask.data as Float32Array;
  // Graphs written since 0.5.3 give the head's log-probabilities and each row's mean distribution
  // (training/ctc_outputs.py); older ones its logits, normalised here.
  const logp = out.ctc_logp;
  const ctcLogProbs = (logp ?? out.ctc_logits).data as Float32Array;
  const means = logp
    ? rowsOf(out.ctc_mean.data as Float32Array, px.batch)
    : ctcLogSoftmax(ctcLogProbs, mask, px.batch, visual);
  const reads = ctcGreedyFrames(ctcLogProbs, mask, px.batch, visual, head.blank);
  reads.forEach((r, b) => (r.mean = means[b]));
  return {
    k: out.vis_k.data as Float32Array,
    v: out.vis_v.data as Float32Array,
    mask,
    ctcLogProbs,
    visual,
    reads,
  };
}

/** A request for a pass, its crops' bytes copied into one buffer of their own (a crop may view a larger one). */
function requestOf(id: number, input: VisionInput): { req: VisionRequest; transfer: ArrayBuffer[] } {
  if ('pixels' in input) return { req: { id, pixels: input.pixels }, transfer: [] };
  const data = new Uint8Array(input.crops.reduce((n, c) => n + c.data.length, 0));
  let at = 0;
  for (const c of input.crops) {
    data.set(c.data, at);
    at += c.data.length;
  }
  const req: VisionRequest = {
    id,
    widths: input.crops.map((c) => c.width),
    data,
    ...(input.lines ? { lines: [...input.lines] } : {}),
  };
  return { req, transfer: [data.buffer as ArrayBuffer] };
}

/** The session on this thread (a GPU, where launching kernels is all the thread does). */
export class InProcessVision implements VisionRunner {
  constructor(
    private readonly session: ort.InferenceSession,
    private readonly head: VisionHead,
  ) {}

  run(input: VisionInput): Promise<VisionOutputs> {
    return runVisionSession(this.session, input, this.head);
  }

  async check(files: readonly BundleFile[]): Promise<void> {
    for (const f of files) checkFile(f);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}

/** The session in a worker thread; requests are answered in order, one at a time. */
export class WorkerVision implements VisionRunner {
  private readonly pending = new Map<number, { resolve: (m: Answer) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private failure: Error | null = null;
  /** Closing: the thread stays referenced until it has exited (release() waits for that). */
  private closing = false;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (m: VisionResponse) => {
      if (!('id' in m)) return;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve(m);
      this.idle();
    });
    // A worker that dies fails what it held; the engine reports those lines and later vision passes fail clearly.
    const fail = (e: Error): void => {
      this.failure ??= e;
      for (const p of this.pending.values()) p.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the vision worker thread exited (code ${code})`)));
    this.idle();
  }

  /**
   * Start the worker and open its session; rejects with the engine's error when the graph's file is missing or not
   * the one config.json names, with onnxruntime's message when the model cannot load.
   */
  static open(data: VisionWorkerData): Promise<WorkerVision> {
    // A spare thread already started (vision/thread.ts) is sent its graph; else a thread starts with it.
    const spare = takeSpareVisionThread();
    const worker = spare ?? new Worker(VISION_WORKER_URL, { workerData: data });
    if (spare) {
      spare.ref();
      spare.postMessage({ open: data });
    }
    return new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      worker.once('error', onError);
      worker.once('message', (m: VisionResponse) => {
        worker.off('error', onError);
        if ('ready' in m && m.ready) resolve(new WorkerVision(worker));
        else {
          void worker.terminate();
          if ('ready' in m && m.code) reject(new EngineError(m.code, m.error, data.file.path));
          else reject(new Error('error' in m ? m.error : 'the vision worker did not start'));
        }
      });
    });
  }

  async run(input: VisionInput): Promise<VisionOutputs> {
    // Crops go as one moved buffer of their bytes, pixels packed already are copied; the outputs come back moved.
    const m = await this.ask((id) => requestOf(id, input));
    if ('out' in m) return m.out;
    throw new Error(`vision pass failed: ${'error' in m ? m.error : 'no outputs'}`);
  }

  async check(files: readonly BundleFile[]): Promise<void> {
    const m = await this.ask((id) => ({ req: { id, check: [...files] }, transfer: [] }));
    if ('error' in m) throw m.code ? new EngineError(m.code, m.error, m.path) : new Error(m.error);
  }

  /** Send the worker a request and wait for its answer (a dead thread's failure, if it has died). */
  private ask(
    request: (id: number) => { req: VisionRequest | CheckRequest; transfer: ArrayBuffer[] },
  ): Promise<Answer> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      const { req, transfer } = request(id);
      this.worker.postMessage(req, transfer);
    });
  }

  /** The thread died (not closed): what it held has failed, and it takes no more passes. */
  get dead(): boolean {
    return this.failure !== null && !this.closing;
  }

  /** Stop the thread the way a crash would (its passes fail, `dead` turns true); the restart test uses it. */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  /** An idle worker does not keep the process alive (a CLI run ends when its work does). */
  private idle(): void {
    if (this.pending.size === 0 && !this.closing) this.worker.unref();
  }

  async release(): Promise<void> {
    if (this.failure) return;
    this.failure = new EngineError('ENGINE_CLOSED', "the engine was closed before this line's vision pass finished");
    this.closing = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage({ close: true });
    await exited;
  }
}

/**
 * The vision thread, replaced when it dies: a thread lost to a crash or to running out of memory fails the passes
 * it held (their lines report the error), and the next pass starts a new one, so one bad moment does not fail
 * every later job of a long-running worker.
 */
export class RestartingVision implements VisionRunner {
  private current: Promise<WorkerVision>;
  private closed = false;
  /** Threads started to replace a dead one. */
  restarts = 0;

  private constructor(
    private readonly data: VisionWorkerData,
    first: WorkerVision,
  ) {
    this.current = Promise.resolve(first);
  }

  static async open(data: VisionWorkerData): Promise<RestartingVision> {
    return new RestartingVision(data, await WorkerVision.open(data));
  }

  /** The live thread (for tests: to stop it as a crash would). */
  thread(): Promise<WorkerVision> {
    return this.current;
  }

  async run(input: VisionInput): Promise<VisionOutputs> {
    const held = this.current;
    const w = await held;
    if (!w.dead || this.closed) return w.run(input);
    // Passes that find it dead at once share one replacement.
    if (this.current === held) {
      this.current = WorkerVision.open(this.data);
      this.restarts++;
      // A replacement that cannot start leaves the dead one in place: the next pass tries again.
      this.current.catch(() => {
        if (!this.closed) this.current = held;
      });
    }
    return (await this.current).run(input);
  }

  async check(files: readonly BundleFile[]): Promise<void> {
    await (await this.current).check(files);
  }

  async release(): Promise<void> {
    this.closed = true;
    await (await this.current.catch(() => null))?.release();
  }
}
