/**
 * A job's event stream: token deltas (marking which tokens an accepted draft gave and which the verifier),
 * region, page and job completion, failure and cancellation; each numbered, so a client resumes with `after`.
 */
import type { Sequenced } from '../src/jobs/events.js';
import { subscribeParseJobEvents } from '../src/resolvers/parse-job-events.js';
import { builder } from './builder.js';
import { ErrorCode } from './errors.js';
import { SpeculationMetrics } from './metrics.js';
import { ParseJob } from './parse-job.js';

type Of<T extends Sequenced['type']> = Extract<Sequenced, { type: T }>;

const JobEvent = builder.interfaceRef<Sequenced>('JobEvent').implement({
  description: 'Every event carries its job and its place in the job\'s sequence (1, 2, 3, ... with no gaps).',
  fields: (t) => ({ seq: t.exposeInt('seq'), jobId: t.exposeID('jobId') }),
});

const TokenDelta = builder.objectRef<Of<'token'>>('TokenDelta').implement({
  description: 'Tokens one decoder step committed on one line.',
  interfaces: [JobEvent],
  fields: (t) => ({
    page: t.exposeInt('page'),
    line: t.exposeInt('line', { description: 'Line number on the page, in reading order.' }),
    text: t.exposeString('text'),
    fromDraft: t.exposeBooleanList('fromDraft', { description: 'Per token: true when it came from an accepted draft, false when the verifier chose it.' }),
    accepted: t.int({ description: 'Tokens of this delta that came from the accepted draft.', resolve: (e) => e.fromDraft.filter(Boolean).length }),
    drafted: t.int({ description: 'How deep the draft offered at this step was (0: no draft); accepted/drafted per step gives acceptance live.', resolve: (e) => e.drafted ?? 0 }),
  }),
});

const RegionDone = builder.objectRef<Of<'region'>>('RegionDone').implement({
  interfaces: [JobEvent],
  fields: (t) => ({ page: t.exposeInt('page'), block: t.exposeInt('block', { description: 'Reading order on the page.' }), markdown: t.exposeString('markdown') }),
});

const PageDone = builder.objectRef<Of<'page'>>('PageDone').implement({
  interfaces: [JobEvent],
  fields: (t) => ({ page: t.exposeInt('page'), markdown: t.exposeString('markdown') }),
});

const JobDone = builder.objectRef<Of<'done'>>('JobDone').implement({
  interfaces: [JobEvent],
  fields: (t) => ({
    metrics: t.field({ type: SpeculationMetrics, resolve: (e) => e.metrics }),
    job: t.field({ type: ParseJob, nullable: true, resolve: (e, _args, ctx) => ctx.jobs.get(ctx.tenant ?? '', e.jobId) }),
  }),
});

const JobFailed = builder.objectRef<Of<'failed'>>('JobFailed').implement({
  interfaces: [JobEvent],
  fields: (t) => ({ code: t.field({ type: ErrorCode, resolve: (e) => e.code }), message: t.exposeString('message') }),
});

const JobCancelled = builder.objectRef<Of<'cancelled'>>('JobCancelled').implement({
  interfaces: [JobEvent],
  fields: (t) => ({ cancelled: t.boolean({ resolve: () => true }) }),
});

const JobRestarted = builder.objectRef<Of<'restarted'>>('JobRestarted').implement({
  description: 'The job is read again from the start (its worker stopped mid-job): drop the text its token deltas built so far.',
  interfaces: [JobEvent],
  fields: (t) => ({ attempt: t.exposeInt('attempt') }),
});

const TYPE_NAMES: Record<Sequenced['type'], string> = {
  token: 'TokenDelta',
  region: 'RegionDone',
  page: 'PageDone',
  done: 'JobDone',
  failed: 'JobFailed',
  cancelled: 'JobCancelled',
  restarted: 'JobRestarted',
};

export const ParseJobEvent = builder.unionType('ParseJobEvent', {
  types: [TokenDelta, RegionDone, PageDone, JobDone, JobFailed, JobCancelled, JobRestarted],
  resolveType: (e) => TYPE_NAMES[e.type],
});

builder.subscriptionFields((t) => ({
  parseJobEvents: t.field({
    type: ParseJobEvent,
    description: 'The job\'s events so far (after `after`), then live ones; ends with JobDone, JobFailed or JobCancelled.',
    authScopes: { tenant: true },
    args: { id: t.arg.id({ required: true }), after: t.arg.int({ required: false, description: 'The last seq you saw; 0 or absent replays everything.' }) },
    subscribe: (_root, args, ctx) => subscribeParseJobEvents(String(args.id), args.after, ctx, ctx.tenant as string),
    resolve: (event: Sequenced) => event,
  }),
}));
