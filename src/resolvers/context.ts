/**
 * What every resolver gets: who is asking (the tenant), the jobs, what the engine offers, and the limits.
 * The server builds one per request (and one per graphql-ws connection).
 */
import type { DecodingOptions, StrategyChoices, UncheckedDecoding } from '../engine/strategies/options.js';
import type { Jobs } from '../jobs/jobs.js';

export interface ModelInfo {
  name: string;
  /** When the bundle was exported (ISO 8601, UTC); null where its config does not say. */
  created: string | null;
  device: string;
  /** Why that device (asked for, or what auto found); null where no model is open here. */
  deviceReason: string | null;
  /** fp32 or int8: which graphs the engine runs. */
  precision: string;
  parameters: { dModel: number; layers: number; heads: number; vocabSize: number };
  heads: string[];
  /** Training step the bundle was exported from, where its config records it. */
  trainingStep: number | null;
  sizeBytes: number;
}

/** What a request may choose with the served bundle (derived from the engine's registry). */
export type StrategyInfo = StrategyChoices;

/** A request's context once its API key named a tenant (fields that need one are authorised for it first). */
export type TenantContext = RequestContext & { tenant: string };

export interface EngineStats {
  /** Workers reporting (1 in the embedded mode). */
  workers: number;
  /** Jobs waiting for a worker (the queue's depth). */
  queuedJobs: number;
  /** Lines waiting for a decoder slot, and lines decoding now (all jobs, all workers together). */
  queuedLines: number;
  activeLines: number;
  forwards: number;
  maxBatch: number;
  /** Over the jobs this process has finished: committed tokens per decoder forward, and mean forward time. */
  tokensPerForward: number | null;
  meanForwardMs: number | null;
}

export interface EngineInfo {
  model(): ModelInfo;
  strategies(): StrategyInfo;
  stats(): Promise<EngineStats>;
  /**
   * A request's decoding options resolved against the served bundle (its defaults fill what is absent), or why
   * they cannot be: a message naming the valid choices. Options resolved before come back as they are.
   */
  resolveDecoding(
    input: UncheckedDecoding | undefined,
  ): { options: DecodingOptions; error?: undefined } | { error: string; options?: undefined };
}

export interface ApiLimits {
  uploadBytes: number;
  pages: number;
  /** Unfinished jobs one tenant may have at once. */
  activeJobs: number;
  depth: number;
  complexity: number;
}

/** Bytes from a URL, when URL input is switched on (https only, public addresses only, size and time limits). */
export type UrlFetcher = (url: string, maxBytes: number) => Promise<{ bytes: Uint8Array; fileName: string }>;

export interface RequestContext {
  /** Null when the request carries no valid key and anonymous use is off. */
  tenant: string | null;
  authFailure?: 'missing' | 'malformed' | 'unknown';
  jobs: Jobs;
  engine: EngineInfo;
  limits: ApiLimits;
  fetchUrl: UrlFetcher | null;
  /** Unexpected errors go here (Sentry when configured), with what identifies the request. */
  report(error: unknown, extra?: Record<string, string>): void;
  /** Aborted when the server shuts down: subscriptions end there, cleanly, rather than have their sockets cut. */
  shutdown?: AbortSignal;
}
