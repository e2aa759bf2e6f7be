/** The engine: the model it serves, the strategies a request may pick, and live load. */
import type { EngineInfo, EngineStats, ModelInfo, StrategyInfo } from '../src/resolvers/context.js';
import { builder } from './builder.js';
import { DrafterEnum, VerifierEnum } from './decoding.js';

const Model = builder.objectRef<ModelInfo>('Model').implement({
  description: 'The model bundle the engine serves, and where and how it runs.',
  fields: (t) => ({
    name: t.exposeString('name', { description: "The bundle's name, from its config." }),
    created: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the bundle was exported; null where its config does not say.',
      resolve: (m) => m.created,
    }),
    device: t.exposeString('device', {
      description:
        'Where the model runs: cpu, webgpu (a GPU through Vulkan) or cuda; on ' +
        'an API instance, "workers (SPECULA_DEVICE)".',
    }),
    deviceReason: t.exposeString('deviceReason', {
      nullable: true,
      description:
        'Why that device: "asked for", or what SPECULA_DEVICE=auto found; null ' +
        'on an API instance, which opens no model.',
    }),
    precision: t.exposeString('precision', {
      description:
        'fp32 or int8: which vision graph the workers run (int8 by default on ' +
        'CPU where the bundle has one; the decoder is float)',
    }),
    heads: t.exposeStringList('heads', {
      description: 'Output heads the bundle has, of lm, ctc, mtp, pmtp and diffusion.',
    }),
    trainingStep: t.exposeInt('trainingStep', {
      nullable: true,
      description: 'Training step the bundle was exported from; null where its config does not say.',
    }),
    sizeBytes: t.exposeInt('sizeBytes', { description: "Bytes of the bundle's model files." }),
    layers: t.int({ description: 'Decoder layers.', resolve: (m) => m.parameters.layers }),
    dModel: t.int({ description: "Width of the decoder's hidden state.", resolve: (m) => m.parameters.dModel }),
    vocabSize: t.int({ description: 'Tokens in the vocabulary.', resolve: (m) => m.parameters.vocabSize }),
  }),
});

const DrafterChoice = builder.objectRef<StrategyInfo['drafters'][number]>('DrafterChoice').implement({
  description: 'A drafter, and whether the served bundle can run it.',
  fields: (t) => ({
    name: t.field({ type: DrafterEnum, description: 'The drafter.', resolve: (d) => d.name }),
    description: t.exposeString('description', { description: 'What it drafts from.' }),
    available: t.exposeBoolean('available', { description: 'False where the bundle lacks the model head it runs on.' }),
    reason: t.string({
      nullable: true,
      description: 'Why it is not available, when it is not.',
      resolve: (d) => d.reason ?? null,
    }),
  }),
});

const VerifierChoice = builder.objectRef<StrategyInfo['verifiers'][number]>('VerifierChoice').implement({
  description: 'A verifier a request may pick.',
  fields: (t) => ({
    name: t.field({ type: VerifierEnum, description: 'The verifier.', resolve: (v) => v.name }),
    description: t.exposeString('description', { description: 'How it decides what to keep.' }),
  }),
});

const Strategies = builder.objectRef<StrategyInfo>('Strategies').implement({
  description: 'The drafters and verifiers a request may choose with the served bundle, and the defaults.',
  fields: (t) => ({
    drafters: t.field({
      type: [DrafterChoice],
      description: 'Every drafter, and whether this bundle can run it.',
      resolve: (s) => s.drafters,
    }),
    verifiers: t.field({ type: [VerifierChoice], description: 'Every verifier.', resolve: (s) => s.verifiers }),
    visualKeepMin: t.float({
      description: 'Smallest share of visual tokens `decoding.visualTokens.keep` accepts.',
      resolve: (s) => s.visualKeep.min,
    }),
    focalLayers: t.exposeIntList('focalLayers', {
      description: 'Decoder layers (0-based) whose attention focal pruning follows.',
    }),
    defaultDrafter: t.field({
      type: DrafterEnum,
      description: 'The drafter a request that names none gets.',
      resolve: (s) => s.defaults.drafter,
    }),
    defaultVerifier: t.field({
      type: VerifierEnum,
      description: 'The verifier a request that names none gets.',
      resolve: (s) => s.defaults.verifier,
    }),
  }),
});

const Stats = builder.objectRef<EngineStats>('EngineStats').implement({
  description: 'Live load of the engine, summed over the workers that are up.',
  fields: (t) => ({
    workers: t.exposeInt('workers', {
      description:
        'Workers up: those whose heartbeat is live (1 in the embedded mode). With none, jobs wait QUEUED ' +
        'and an API instance says so on /readyz.',
    }),
    queuedJobs: t.exposeInt('queuedJobs', {
      description: 'Jobs waiting for a worker to take them up (the queue depth, over all tenants).',
    }),
    queuedLines: t.exposeInt('queuedLines', { description: 'Lines waiting for a decoder slot, over all workers.' }),
    activeLines: t.exposeInt('activeLines', { description: 'Lines decoding now, over all workers.' }),
    forwards: t.exposeInt('forwards', {
      description: 'Batched decoder forwards run since the workers started, summed over them.',
    }),
    maxBatch: t.exposeInt('maxBatch', {
      description: 'Most lines one decoder forward may hold (the largest over the workers; 0 with none).',
    }),
    tokensPerForward: t.exposeFloat('tokensPerForward', {
      nullable: true,
      description: 'Committed tokens per line per forward since the workers started; null before the first forward.',
    }),
    meanForwardMs: t.exposeFloat('meanForwardMs', {
      nullable: true,
      description: 'Mean time of one batched decoder forward, in milliseconds; null before the first forward.',
    }),
  }),
});

const Engine = builder.objectRef<EngineInfo>('Engine').implement({
  description: 'The reading engine: its model, the decoding choices it allows, and its live load.',
  fields: (t) => ({
    models: t.field({ type: [Model], description: 'The model the engine serves (one).', resolve: (e) => [e.model()] }),
    strategies: t.field({
      type: Strategies,
      description: 'What a request may choose with the served bundle.',
      resolve: (e) => e.strategies(),
    }),
    stats: t.field({
      type: Stats,
      description: 'Live load, summed over the workers that are up.',
      resolve: (e) => e.stats(),
    }),
  }),
});

builder.queryFields((t) => ({
  engine: t.field({
    type: Engine,
    description: 'The served model, the decoding choices it allows, and live load.',
    authScopes: { tenant: true },
    resolve: (_root, _args, ctx) => ctx.engine,
  }),
}));
