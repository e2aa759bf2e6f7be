/**
 * A model bundle: models/<name>/config.json plus its ONNX graphs. Loading checks every file it names
 * (present, hash as recorded) so a missing or corrupt file is reported by name, not as an opaque ORT error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import * as z from 'zod';
import { type BundleFile, checkFile } from './file.js';
import {
  autoCandidates,
  checkDeviceAsked,
  type Device,
  type DeviceChoice,
  type DeviceChoiceMade,
  deviceUnavailable,
  isDeviceFailure,
  isGpu,
} from './device.js';
import { PACKAGE_ROOT } from '../../package-root.js';
import { EngineError } from '../errors.js';
import { HeadSession } from './head-session.js';
import { ScriptGateSchema } from '../ctc/script-gate.js';
import { checkThreads, decoderThreads, visionThreads } from './threads.js';
import { Tokenizer } from './tokenizer.js';
import { InProcessVision, RestartingVision, type VisionHead, type VisionRunner } from '../vision/runner.js';

const FileRef = z.object({ path: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/) });

export const BundleConfigSchema = z.object({
  name: z.string(),
  format: z.literal(1),
  created: z.string().optional(),
  vocab: z.array(z.string()).min(6),
  specialIds: z.object({
    pad: z.number().int(),
    bos: z.number().int(),
    eos: z.number().int(),
    mask: z.number().int(),
    unk: z.number().int(),
    ctcBlank: z.number().int(),
  }),
  dims: z.object({
    dModel: z.number().int().positive(),
    nLayers: z.number().int().positive(),
    nHeads: z.number().int().positive(),
    headDim: z.number().int().positive(),
    dFf: z.number().int().positive(),
    vocabSize: z.number().int().positive(),
    maxVisual: z.number().int().positive(),
    maxText: z.number().int().positive(),
  }),
  image: z.object({
    height: z.number().int().positive(),
    widthMultiple: z.number().int().positive(),
    visualStride: z.number().int().positive(),
    maxWidth: z.number().int().positive(),
    /**
     * The widest piece of a line read in pieces (engine/vision/wide-crops.ts); a line wider than maxWidth is cut into
     * these.
     */
    readWidth: z.number().int().positive().optional(),
    /**
     * A line whose CTC reading has more characters than this is read in pieces (the decoder's reach, from training).
     */
    readChars: z.number().int().positive().optional(),
    normalise: z.literal('minmax-ink-one'),
  }),
  decoding: z.object({
    maxNewTokens: z.number().int().positive(),
    negativeBias: z.number(),
    /**
     * Most characters a reading spells per visual token (default 1: text). A formula bundle spells LaTeX, several
     * characters to a frame (`\frac{\partial B}{\partial t}` over a few columns), and its CTC reading cannot say
     * how long its reading is.
     */
    charsPerFrame: z.number().positive().optional(),
  }),
  heads: z.object({
    lm: z.boolean(),
    ctc: z.boolean(),
    mtp: z.boolean(),
    pmtp: z.boolean().optional(),
    diffusion: z.boolean(),
  }),
  focalLayers: z.array(z.number().int()),
  files: z.object({
    vision: FileRef,
    decoder: FileRef,
    mtp: FileRef.optional(),
    pmtp: FileRef.optional(),
    /** The vision graph with integer kernels (training/quantize.py): what a CPU engine runs by default. */
    visionInt8: FileRef.optional(),
  }),
  /**
   * How the int8 vision graph was made and how far it may stray from the float one: the golden check holds the
   * vision outputs, and the decoder's outputs that carry its error, to these (the float graphs keep
   * golden.json's), and the greedy texts must match. The decoder stays float.
   */
  int8: z
    .object({
      tolerance: z.object({ vision: z.number().positive(), decoder: z.number().positive() }),
    })
    .passthrough()
    .optional(),
  /** The MTP drafter head, when the bundle has one: how many depths it was trained for. */
  mtp: z.object({ depth: z.number().int().positive() }).passthrough().optional(),
  /** The P-MTP head (same contract as the MTP head, trained deeper with P-MTP's curriculum), when there is one. */
  pmtp: z.object({ depth: z.number().int().positive() }).passthrough().optional(),
  /** The decoder was trained to fill mask blocks of these lengths (the diffusion drafters), when it was. */
  /**
   * A region bundle reads up to maxLines line crops as one sequence: BOS opens each line (decoded as a line
   * break), a text position is line * lineStride + its index in the line, and the vision graph takes each crop's
   * line index as input `lines`.
   */
  region: z
    .object({ maxLines: z.number().int().positive(), lineStride: z.number().int().positive() })
    .passthrough()
    .optional(),
  diffusion: z
    .object({ blockMin: z.number().int().positive(), blockMax: z.number().int().positive() })
    .passthrough()
    .optional(),
  /**
   * The probe that says a line is in a script the model never learnt (engine/ctc/script-gate.ts), where the bundle has
   * one.
   */
  scriptGate: ScriptGateSchema.optional(),
  golden: z.string(),
  training: z.record(z.string(), z.unknown()).optional(),
  accuracy: z.record(z.string(), z.unknown()).optional(),
});
export type BundleConfig = z.infer<typeof BundleConfigSchema>;

export type { Device, DeviceChoice } from './device.js';
export { checkThreads, decoderThreads, visionThreads } from './threads.js';

/** The drafter heads a bundle may carry beside its decoder, each its own ONNX file with the MTP head contract. */
export const HEAD_FILES = ['mtp', 'pmtp'] as const;
export type DrafterHead = (typeof HEAD_FILES)[number];

/**
 * The float vision graph, or the int8 one (integer kernels: about twice its speed on CPU). The decoder is float in
 * both.
 */
export type Precision = 'fp32' | 'int8';
export const PRECISIONS: readonly Precision[] = ['fp32', 'int8'];

export interface BundleOptions {
  /** Default cpu; `auto` takes a GPU where one answers (device.ts). */
  device?: DeviceChoice;
  /** Default: int8 on CPU where the bundle has an int8 vision graph, fp32 otherwise (and always on a GPU). */
  precision?: Precision;
  /**
   * Intra-op threads for the decoder's CPU sessions (default: decoderThreads()); the vision worker takes half
   * (visionThreads).
   */
  threads?: number;
}

export interface Bundle {
  dir: string;
  config: BundleConfig;
  tokenizer: Tokenizer;
  /** The vision pass: in a worker thread on CPU, in-process on a GPU (see vision/runner.ts). */
  vision: VisionRunner;
  decoder: ort.InferenceSession;
  /** The MTP drafter head (mtp.onnx), where the bundle has one: its session is built when first drafted with. */
  mtp?: HeadSession;
  /** The P-MTP drafter head (pmtp.onnx, the same contract), where the bundle has one. */
  pmtp?: HeadSession;
  device: Device;
  /** Why this device: asked for by name, or what `auto` found. */
  deviceReason: string;
  /** Which vision graph runs (the decoder and the drafter heads are float either way). */
  precision: Precision;
  /** Intra-op threads its CPU sessions were opened with. */
  threads: number;
}

/** The precisions a bundle ships vision graphs for. */
export function bundlePrecisions(config: BundleConfig): Precision[] {
  return config.files.visionInt8 && config.int8 ? ['fp32', 'int8'] : ['fp32'];
}

/** The precision a bundle opens with when none is asked for, and a clear error for one it cannot give. */
export function choosePrecision(
  config: BundleConfig,
  device: Device,
  asked?: Precision,
  where = 'the bundle',
): Precision {
  const hasInt8 = bundlePrecisions(config).includes('int8');
  if (asked === undefined) return device === 'cpu' && hasInt8 ? 'int8' : 'fp32';
  if (!PRECISIONS.includes(asked))
    throw new EngineError(
      'INVALID_PRECISION',
      `precision must be one of ${PRECISIONS.join(', ')}, got "${String(asked)}"`,
    );
  if (asked === 'int8' && !hasInt8)
    throw new EngineError(
      'INVALID_PRECISION',
      `${where} has no int8 vision graph (files.visionInt8 and int8 in its config.json); use precision fp32`,
    );
  if (asked === 'int8' && isGpu(device))
    throw new EngineError(
      'INVALID_PRECISION',
      `the int8 vision graph runs on CPU only (its integer kernels are CPU ` +
        `kernels); use precision fp32 with device ${device}`,
    );
  return asked;
}

/** The bundle shipped in this repository, used when no model is named. */
export const DEFAULT_BUNDLE = join(PACKAGE_ROOT, 'models', 'specula-line-base');

/** A bundle's validated config alone, without loading its models (an API instance needs no more). */
export function readBundleConfig(dir: string = DEFAULT_BUNDLE): BundleConfig {
  const path = join(dir, 'config.json');
  if (!existsSync(path)) throw new EngineError('BUNDLE_MISSING_FILE', `model bundle file is missing: ${path}`, path);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new EngineError(
      'BUNDLE_CORRUPT_FILE',
      `model bundle file is not valid JSON: ${path} (${(e as Error).message})`,
      path,
    );
  }
  const parsed = BundleConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new EngineError('BUNDLE_INVALID_CONFIG', `model bundle config is invalid: ${path}: ${issues}`, path);
  }
  const c = parsed.data;
  if (c.vocab.length !== c.dims.vocabSize) {
    throw new EngineError(
      'BUNDLE_INVALID_CONFIG',
      `model bundle config is invalid: ${path}: vocab has ${c.vocab.length} ` +
        `entries, dims.vocabSize says ${c.dims.vocabSize}`,
      path,
    );
  }
  const gateRow = c.scriptGate?.weights.find((w) => w.length !== c.dims.vocabSize);
  if (gateRow) {
    throw new EngineError(
      'BUNDLE_INVALID_CONFIG',
      `model bundle config is invalid: ${path}: scriptGate has a class of ` +
        `${gateRow.length} weights for a vocabulary of ${c.dims.vocabSize}`,
      path,
    );
  }
  return c;
}

function sessionOptions(device: Device, threads: number): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [device],
    graphOptimizationLevel: 'all',
    // Explicit, because onnxruntime's own default can leave cores idle; on a GPU these threads run the nodes the
    // provider leaves to the CPU (shape arithmetic).
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    // The vision worker and the decoder run at the same time: threads that spin while waiting for work would
    // take the cores from each other.
    extra: { session: { intra_op: { allow_spinning: '0' } } },
    // A GPU provider warns on every session that it leaves shape arithmetic to the CPU, as it means to.
    ...(isGpu(device) ? { logSeverityLevel: 3 as const } : {}),
  };
}

function loadFailure(e: unknown, path: string, device: Device): EngineError {
  const msg = (e as Error).message;
  if (isDeviceFailure(device, msg))
    return deviceUnavailable(device, `onnxruntime could not open ${path} on it (${msg.trim()})`, path);
  return new EngineError('BUNDLE_CORRUPT_FILE', `onnxruntime could not load ${path}: ${msg}`, path);
}

/** A session from a graph's path (onnxruntime reads the file). */
async function openSession(path: string, device: Device, threads: number): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(path, sessionOptions(device, threads));
  } catch (e) {
    throw loadFailure(e, path, device);
  }
}

async function openVision(file: BundleFile, device: Device, threads: number, head: VisionHead): Promise<VisionRunner> {
  if (isGpu(device)) {
    checkFile(file);
    return new InProcessVision(await openSession(file.path, device, threads), head);
  }
  try {
    return await RestartingVision.open({ file, options: sessionOptions(device, visionThreads(threads)), head });
  } catch (e) {
    throw e instanceof EngineError ? e : loadFailure(e, file.path, device);
  }
}

/**
 * Open a bundle on the device asked for. `auto` tries each device autoCandidates finds in turn, going on past one
 * that proves absent when its sessions open (DEVICE_UNAVAILABLE), and ends on the CPU.
 */
export async function loadBundle(dir: string = DEFAULT_BUNDLE, opts: BundleOptions = {}): Promise<Bundle> {
  const asked = opts.device ?? 'cpu';
  if (asked !== 'auto') {
    checkDeviceAsked(asked);
    return openBundle(dir, { device: asked, reason: 'asked for' }, opts);
  }
  const tried: string[] = [];
  for (const choice of autoCandidates()) {
    try {
      const reason = tried.length ? `${choice.reason}; ${tried.join('; ')}` : choice.reason;
      return await openBundle(dir, { ...choice, reason }, opts);
    } catch (e) {
      if (!(e instanceof EngineError && e.code === 'DEVICE_UNAVAILABLE') || choice.device === 'cpu') throw e;
      tried.push(`${choice.device} did not open`);
    }
  }
  throw new Error('unreachable: auto always ends on the CPU');
}

async function openBundle(dir: string, made: DeviceChoiceMade, opts: BundleOptions): Promise<Bundle> {
  const { device } = made;
  const config = readBundleConfig(dir);
  for (const head of HEAD_FILES) {
    if (config.heads[head] && !config.files[head]) {
      throw new EngineError(
        'BUNDLE_INVALID_CONFIG',
        `model bundle config is invalid: heads.${head} is set but files.${head}` +
          ` is missing (${join(dir, 'config.json')})`,
        join(dir, 'config.json'),
      );
    }
  }
  const precision = choosePrecision(config, device, opts.precision, dir);
  const visionRef = (precision === 'int8' ? config.files.visionInt8 : undefined) ?? config.files.vision;
  const fileOf = (ref: z.infer<typeof FileRef>): BundleFile => ({ path: join(dir, ref.path), sha256: ref.sha256 });
  const threads = opts.threads ?? decoderThreads();
  checkThreads(threads);
  const { height, widthMultiple, maxWidth } = config.image;
  const head: VisionHead = { spec: { height, widthMultiple, maxWidth }, blank: config.specialIds.ctcBlank };
  // The vision worker starts first, on its own thread, so that onnxruntime's one-time set-up overlaps the rest of
  // a start-up (the server's modules) on this one.
  const opening = openVision(fileOf(visionRef), device, threads, head);
  const decoderFile = fileOf(config.files.decoder);
  const headFiles = HEAD_FILES.flatMap((h) => {
    const ref = config.files[h];
    return ref ? [[h, fileOf(ref)] as const] : [];
  });
  const vision = await opening;
  // The idle vision thread hashes the decoder's and heads' files while this thread builds the decoder's session, to
  // keep hashing off a start-up's critical path; a file that fails its check fails the open by name.
  const checking = vision.check([decoderFile, ...headFiles.map(([, f]) => f)]);
  checking.catch(() => undefined); // awaited below
  let decoder: ort.InferenceSession | null = null;
  try {
    decoder = await openSession(decoderFile.path, device, threads);
    await checking;
  } catch (e) {
    await Promise.all([decoder?.release(), vision.release()]);
    throw await checking.then(
      () => e,
      (refused: unknown) => refused,
    );
  }
  const tokenizer = new Tokenizer(config.vocab, config.specialIds, config.region ? config.specialIds.bos : undefined);
  const heads: Partial<Record<DrafterHead, HeadSession>> = {};
  for (const [h, file] of headFiles) heads[h] = new HeadSession(() => openSession(file.path, device, threads));
  return { dir, config, tokenizer, vision, decoder, device, deviceReason: made.reason, precision, threads, ...heads };
}

export async function closeBundle(b: Bundle): Promise<void> {
  await b.vision.release();
  await b.decoder.release();
  await b.mtp?.release();
  await b.pmtp?.release();
}
