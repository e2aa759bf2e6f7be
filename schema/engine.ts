/** The engine: the model it serves, the strategies a request may pick, and live load. */
import type { EngineInfo, EngineStats, ModelInfo, StrategyInfo } from '../src/resolvers/context.js';
import { builder } from './builder.js';
import { DrafterEnum, VerifierEnum } from './decoding.js';

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

const DrafterChoice = builder.objectRef<StrategyInfo['drafters'][number]>('DrafterChoice').implement({
  description: 'A drafter, and whether the served bundle can run it.',
  fields: (t) => ({
    name: t.field({ type: DrafterEnum, resolve: (d) => d.name }),
    description: t.exposeString('description'),
    available: t.exposeBoolean('available', { description: 'False where the bundle lacks the model head it runs on.' }),
    reason: t.string({ nullable: true, description: 'Why it is not available, when it is not.', resolve: (d) => d.reason ?? null }),
  }),
});

const VerifierChoice = builder.objectRef<StrategyInfo['verifiers'][number]>('VerifierChoice').implement({
  description: 'A verifier a request may pick.',
  fields: (t) => ({
    name: t.field({ type: VerifierEnum, resolve: (v) => v.name }),
    description: t.exposeString('description'),
  }),
});

const Strategies = builder.objectRef<StrategyInfo>('Strategies').implement({
  fields: (t) => ({
    drafters: t.field({ type: [DrafterChoice], resolve: (s) => s.drafters }),
    verifiers: t.field({ type: [VerifierChoice], resolve: (s) => s.verifiers }),
    visualKeepMin: t.float({ resolve: (s) => s.visualKeep.min }),
    focalLayers: t.exposeIntList('focalLayers'),
    defaultDrafter: t.field({ type: DrafterEnum, description: 'The drafter a request that names none gets.', resolve: (s) => s.defaults.drafter }),
    defaultVerifier: t.field({ type: VerifierEnum, description: 'The verifier a request that names none gets.', resolve: (s) => s.defaults.verifier }),
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
