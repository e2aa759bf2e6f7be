/** What the `engine` query shows, read off the running engine and the forward counters. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import { strategies } from '../engine/options.js';
import type { EngineInfo, ModelInfo } from '../resolvers/context.js';
import type { ServerMetrics } from './metrics.js';

export function engineInfo(engine: Engine, metrics: ServerMetrics): EngineInfo {
  const { config, dir, device } = engine.bundle;
  const model: ModelInfo = {
    name: config.name,
    created: config.created ?? '',
    device,
    parameters: { dModel: config.dims.dModel, layers: config.dims.nLayers, heads: config.dims.nHeads, vocabSize: config.dims.vocabSize },
    heads: Object.entries(config.heads).filter(([, on]) => on).map(([k]) => k),
    trainingStep: typeof config.training?.steps === 'number' ? config.training.steps : null,
    sizeBytes: Object.values(config.files).reduce((n, f) => n + statSync(join(dir, f.path)).size, 0),
  };
  return {
    model: () => model,
    strategies: () => strategies(config),
    stats: () => {
      const s = engine.stats;
      return {
        queuedLines: s.queued,
        activeLines: s.active,
        forwards: s.forwards,
        maxBatch: engine.maxBatch,
        tokensPerForward: metrics.rowForwards ? metrics.committed / metrics.rowForwards : null,
        meanForwardMs: metrics.forwards ? metrics.forwardMs / metrics.forwards : null,
      };
    },
    checkDecoding: (input) => {
      try {
        engine.resolve(input);
        return null;
      } catch (e) {
        if (e instanceof EngineError && e.code === 'INVALID_OPTIONS') return e.message;
        throw e;
      }
    },
  };
}
