/** The server's settings, from the environment, validated once at start-up with errors that name the variable. */
import * as z from 'zod';
import { type Device, DEVICE_CHOICES, type DeviceChoice } from '../engine/bundle/device.js';
import type { EngineOptions } from '../engine/engine.js';
import { FormulaReader } from '../worker/formula-reader.js';

const flag = z
  .enum(['0', '1', 'true', 'false', ''])
  .default('0')
  .transform((v) => v === '1' || v === 'true');
const int = (def: number, min = 1): z.ZodType<number, string | undefined> =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: 'custom', message: `must be an integer >= ${min}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const EnvSchema = z.object({
  PORT: int(4000, 0),
  HOST: z.string().default('0.0.0.0'),
  SPECULA_API_KEYS: z.string().default(''),
  SPECULA_API_KEYS_FILE: z.string().optional(),
  SPECULA_ALLOW_ANONYMOUS: flag,
  SPECULA_MODEL: z.string().optional(),
  /** The formula bundle (display formulas read as LaTeX); unset: the shipped one; "none": formulas are read as text. */
  SPECULA_FORMULA_MODEL: z.string().optional(),
  SPECULA_DEVICE: z.enum(DEVICE_CHOICES).default('cpu'),
  /** Which graphs the engine runs: unset, int8 on CPU where the bundle has them (fp32 otherwise). */
  SPECULA_PRECISION: z.enum(['fp32', 'int8']).optional(),
  /** Jobs one worker reads at once; their lines share engine batches. */
  SPECULA_CONCURRENCY: int(4),
  /** Lines per decoder forward (0 = the engine's default for the device: 8 on CPU, 32 on a GPU). */
  SPECULA_MAX_BATCH: int(0, 0),
  /**
   * onnxruntime intra-op threads for the decoder (0 = the engine's default, half the cores: on 2 cores, 1 gave the most
   * pages/s under concurrent load and over many pages, 2 a single job 2% sooner).
   */
  SPECULA_THREADS: int(0, 0),
  SPECULA_MAX_UPLOAD_BYTES: int(25 * 1024 * 1024),
  SPECULA_MAX_PIXELS: int(100_000_000),
  /** Pixels of pages rendered and laid out at once over all jobs (worker/pixel-budget.ts); 0: SPECULA_MAX_PIXELS. */
  SPECULA_PIXELS_IN_FLIGHT: int(0, 0),
  SPECULA_MAX_PAGES: int(100),
  SPECULA_MAX_ACTIVE_JOBS: int(100),
  SPECULA_MAX_DEPTH: int(12),
  SPECULA_MAX_COMPLEXITY: int(20000),
  SPECULA_URL_INPUT: flag,
  /** Schema introspection (codegen, Postman, GraphiQL load the schema by it); 0 turns it off. */
  SPECULA_INTROSPECTION: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('1')
    .transform((v) => v !== '0' && v !== 'false'),
  /** GraphiQL at /graphql for a browser (its assets served from the package, nothing from a CDN). */
  SPECULA_GRAPHIQL: flag,
  SPECULA_URL_TIMEOUT_MS: int(15_000),
  SPECULA_REDIS_URL: z.string().optional(),
  SPECULA_REDIS_PREFIX: z
    .string()
    .regex(/^[\w.-]+$/)
    .default('specula'),
  SPECULA_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  SPECULA_BLOB_DIR: z.string().optional(),
  SPECULA_REDIS_BLOB_MAX_BYTES: int(32 * 1024 * 1024),
  SPECULA_RETENTION_SECONDS: int(86_400),
  SPECULA_JOB_ATTEMPTS: int(3),
  SPECULA_TENANT_CONCURRENCY: int(4),
  SPECULA_TENANT_RATE: int(0, 0),
  SPECULA_WORKER_PORT: int(4001, 0),
  /** Unset (-1): /metrics on the process's own port; set: only on this one (0: any free port). */
  SPECULA_METRICS_PORT: int(-1, 0),
  /** Set: /metrics asks for `Authorization: Bearer <this>`. */
  SPECULA_METRICS_KEY: z.string().optional(),
  /** Live workers an API process needs for /readyz to say ready (0: ready with none, for workers scaled from zero). */
  SPECULA_READY_MIN_WORKERS: int(1, 0),
  /** How long a worker may go without renewing a job's lock before the job is given to another (ms). */
  SPECULA_LOCK_MS: int(30_000, 1000),
  /** A stopping worker's running jobs may finish for this long; then they go back to the queue (ms). */
  SPECULA_SHUTDOWN_GRACE_MS: int(30_000, 0),
  SENTRY_DSN: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface ServerConfig {
  port: number;
  host: string;
  apiKeys: string;
  apiKeysFile?: string;
  allowAnonymous: boolean;
  model?: string;
  /** The formula bundle's folder, or "none"; absent: the shipped one where this install has it. */
  formulaModel?: string;
  device: DeviceChoice;
  precision?: 'fp32' | 'int8';
  concurrency: number;
  maxBatch: number;
  threads: number;
  limits: {
    uploadBytes: number;
    pixels: number;
    pixelsInFlight: number;
    pages: number;
    activeJobs: number;
    depth: number;
    complexity: number;
  };
  urlInput: { enabled: boolean; timeoutMs: number };
  introspection: boolean;
  graphiql: boolean;
  sentryDsn?: string;
  logLevel: string;
  role: 'all' | 'api' | 'worker';
  /** Set: the distributed mode (Redis store, BullMQ queue, Redis events and blobs). Unset: everything in-process. */
  redisUrl?: string;
  /** Key prefix in Redis, so several deployments (or test runs) can share one Redis. */
  redisPrefix: string;
  blobDir?: string;
  redisBlobMaxBytes: number;
  retentionSeconds: number;
  jobAttempts: number;
  tenantConcurrency: number;
  /** Jobs one tenant may start per minute across all workers (0: no limit). */
  tenantRatePerMinute: number;
  workerPort: number;
  /** Where /metrics is served apart from the API and worker ports; absent: on them. */
  metricsPort?: number;
  metricsKey?: string;
  /** Role api: /readyz says 503 with fewer live workers than this. */
  readyMinWorkers: number;
  lockMs: number;
  shutdownGraceMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    apiKeys: e.SPECULA_API_KEYS,
    apiKeysFile: e.SPECULA_API_KEYS_FILE || undefined,
    allowAnonymous: e.SPECULA_ALLOW_ANONYMOUS,
    model: e.SPECULA_MODEL || undefined,
    ...(e.SPECULA_FORMULA_MODEL ? { formulaModel: e.SPECULA_FORMULA_MODEL } : {}),
    device: e.SPECULA_DEVICE,
    ...(e.SPECULA_PRECISION ? { precision: e.SPECULA_PRECISION } : {}),
    concurrency: e.SPECULA_CONCURRENCY,
    maxBatch: e.SPECULA_MAX_BATCH,
    threads: e.SPECULA_THREADS,
    limits: {
      uploadBytes: e.SPECULA_MAX_UPLOAD_BYTES,
      pixels: e.SPECULA_MAX_PIXELS,
      pixelsInFlight: e.SPECULA_PIXELS_IN_FLIGHT || e.SPECULA_MAX_PIXELS,
      pages: e.SPECULA_MAX_PAGES,
      activeJobs: e.SPECULA_MAX_ACTIVE_JOBS,
      depth: e.SPECULA_MAX_DEPTH,
      complexity: e.SPECULA_MAX_COMPLEXITY,
    },
    urlInput: { enabled: e.SPECULA_URL_INPUT, timeoutMs: e.SPECULA_URL_TIMEOUT_MS },
    introspection: e.SPECULA_INTROSPECTION,
    graphiql: e.SPECULA_GRAPHIQL,
    sentryDsn: e.SENTRY_DSN || undefined,
    logLevel: e.LOG_LEVEL,
    role: e.SPECULA_ROLE,
    redisUrl: e.SPECULA_REDIS_URL || undefined,
    redisPrefix: e.SPECULA_REDIS_PREFIX,
    blobDir: e.SPECULA_BLOB_DIR || undefined,
    redisBlobMaxBytes: e.SPECULA_REDIS_BLOB_MAX_BYTES,
    retentionSeconds: e.SPECULA_RETENTION_SECONDS,
    jobAttempts: e.SPECULA_JOB_ATTEMPTS,
    tenantConcurrency: e.SPECULA_TENANT_CONCURRENCY,
    tenantRatePerMinute: e.SPECULA_TENANT_RATE,
    workerPort: e.SPECULA_WORKER_PORT,
    ...(e.SPECULA_METRICS_PORT >= 0 ? { metricsPort: e.SPECULA_METRICS_PORT } : {}),
    ...(e.SPECULA_METRICS_KEY ? { metricsKey: e.SPECULA_METRICS_KEY } : {}),
    readyMinWorkers: e.SPECULA_READY_MIN_WORKERS,
    lockMs: e.SPECULA_LOCK_MS,
    shutdownGraceMs: e.SPECULA_SHUTDOWN_GRACE_MS,
  };
}

/**
 * The formula reader a worker uses (opened lazily, with the engine's options on the device its engine took), or null.
 */
export function formulaReader(config: ServerConfig, device: Device): FormulaReader | null {
  if (config.formulaModel === 'none') return null;
  const opts = { ...engineOptions(config), device };
  return config.formulaModel ? new FormulaReader(config.formulaModel, opts) : FormulaReader.shipped(opts);
}

/** What a worker opens its engine with. */
export function engineOptions(config: ServerConfig): EngineOptions {
  return {
    device: config.device,
    ...(config.maxBatch ? { maxBatch: config.maxBatch } : {}),
    ...(config.precision ? { precision: config.precision } : {}),
    ...(config.threads ? { threads: config.threads } : {}),
  };
}
