/**
 * What the `engine` query shows: the model (from its bundle config: an API instance never loads the model),
 * the strategies it allows, live figures summed over the workers that are up, and the jobs waiting for one.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { BundleConfig, Precision } from '../engine/bundle/bundle.js';
import { EngineError } from '../engine/errors.js';
import {
  type DecodingOptions,
  type UncheckedDecoding,
  resolveDecoding,
  strategies,
} from '../engine/strategies/options.js';
import type { WorkerStats } from '../jobs/fleet.js';
import type { EngineInfo, ModelInfo } from '../resolvers/context.js';

export function engineInfo(
  bundle: { config: BundleConfig; dir: string; device: string; deviceReason?: string; precision: Precision },
  workers: () => Promise<WorkerStats[]>,
  queueDepth: () => Promise<number> = async () => 0,
): EngineInfo {
  const { config, dir, device, precision } = bundle;
  const model: ModelInfo = {
    name: config.name,
    created:
      config.created && !Number.isNaN(Date.parse(config.created)) ? new Date(config.created).toISOString() : null,
    device,
    deviceReason: bundle.deviceReason ?? null,
    precision,
    parameters: {
      dModel: config.dims.dModel,
      layers: config.dims.nLayers,
      heads: config.dims.nHeads,
      vocabSize: config.dims.vocabSize,
    },
    heads: Object.entries(config.heads)
      .filter(([, on]) => on)
      .map(([k]) => k),
    trainingStep: typeof config.training?.steps === 'number' ? config.training.steps : null,
    sizeBytes: Object.values(config.files).reduce((n, f) => n + statSync(join(dir, f.path)).size, 0),
  };
  // A region bundle reads paragraphs as regions: a request must suit them too (as the worker will check).
  const resolve = (input: UncheckedDecoding | undefined): DecodingOptions =>
    resolveDecoding(input, config, { regions: Boolean(config.region) });
  return {
    model: () => model,
    strategies: () => strategies(config),
    stats: async () => {
      const [ws, queuedJobs] = await Promise.all([workers(), queueDepth()]);
      const sum = (k: keyof Omit<WorkerStats, 'worker' | 'device'>): number => ws.reduce((n, w) => n + w[k], 0);
      return {
        workers: ws.length,
        queuedJobs,
        queuedLines: sum('queuedLines'),
        activeLines: sum('activeLines'),
        forwards: sum('forwards'),
        maxBatch: Math.max(0, ...ws.map((w) => w.maxBatch)),
        tokensPerForward: sum('rowForwards') ? sum('committed') / sum('rowForwards') : null,
        meanForwardMs: sum('forwards') ? sum('forwardMs') / sum('forwards') : null,
      };
    },
    resolveDecoding: (input) => {
      try {
        return { options: resolve(input) };
      } catch (e) {
        if (e instanceof EngineError && e.code === 'INVALID_OPTIONS') return { error: e.message };
        throw e;
      }
    },
  };
}
