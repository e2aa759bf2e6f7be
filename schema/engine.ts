/** The engine: the model it serves, the strategies a request may pick, and live load. */
import type { EngineInfo, EngineStats, ModelInfo, StrategyInfo } from '../src/resolvers/context.js';
import { builder } from './builder.js';

const Model = builder.objectRef<ModelInfo>('Model').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    created: t.exposeString('created'),
    device: t.exposeString('device'),
    precision: t.exposeString('precision', { description: 'fp32 or int8: which vision graph the workers run (int8 by default on CPU where the bundle has one; the decoder is float)' }),
    heads: t.exposeStringList('heads'),
    trainingStep: t.exposeInt('trainingStep', { nullable: true }),
    sizeBytes: t.exposeInt('sizeBytes'),
    layers: t.int({ resolve: (m) => m.parameters.layers }),
    dModel: t.int({ resolve: (m) => m.parameters.dModel }),
    vocabSize: t.int({ resolve: (m) => m.parameters.vocabSize }),
  }),
});

const Drafter = builder.objectRef<StrategyInfo['drafters'][number]>('Drafter').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    available: t.exposeBoolean('available'),
    reason: t.string({ nullable: true, resolve: (d) => d.reason ?? null }),
  }),
});

const Strategies = builder.objectRef<StrategyInfo>('Strategies').implement({
  fields: (t) => ({
    drafters: t.field({ type: [Drafter], resolve: (s) => s.drafters }),
    verifiers: t.exposeStringList('verifiers'),
    visualKeepMin: t.float({ resolve: (s) => s.visualKeep.min }),
    focalLayers: t.exposeIntList('focalLayers'),
    defaultDrafter: t.string({ description: 'The drafter a request that names none gets.', resolve: (s) => s.defaults.drafter }),
    defaultVerifier: t.string({ description: 'The verifier a request that names none gets.', resolve: (s) => s.defaults.verifier }),
  }),
});

const Stats = builder.objectRef<EngineStats>('EngineStats').implement({
  fields: (t) => ({
    workers: t.exposeInt('workers'),
    queuedLines: t.exposeInt('queuedLines'),
    activeLines: t.exposeInt('activeLines'),
    forwards: t.exposeInt('forwards'),
    maxBatch: t.exposeInt('maxBatch'),
    tokensPerForward: t.exposeFloat('tokensPerForward', { nullable: true }),
    meanForwardMs: t.exposeFloat('meanForwardMs', { nullable: true }),
  }),
});

const Engine = builder.objectRef<EngineInfo>('Engine').implement({
  fields: (t) => ({
    models: t.field({ type: [Model], resolve: (e) => [e.model()] }),
    strategies: t.field({ type: Strategies, resolve: (e) => e.strategies() }),
    stats: t.field({ type: Stats, resolve: (e) => e.stats() }),
  }),
});

builder.queryFields((t) => ({
  engine: t.field({ type: Engine, authScopes: { tenant: true }, resolve: (_root, _args, ctx) => ctx.engine }),
}));
