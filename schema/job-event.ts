/**
 * A job's event stream: token deltas (marking which tokens an accepted draft gave and which the verifier),
 * region, page and job completion, failure and cancellation; each numbered, so a client resumes with `after`.
 */
import type { Sequenced } from '../src/jobs/events.js';
import { subscribeParseJobEvents } from '../src/resolvers/parse-job-events.js';
import { builder } from './builder.js';
import { jobErrorFields } from './errors.js';
import { SpeculationMetrics } from './metrics.js';
import { ParseJob } from './parse-job.js';

type Of<T extends Sequenced['type']> = Extract<Sequenced, { type: T }>;

const JobEvent = builder.interfaceRef<Sequenced>('JobEvent').implement({
  description: "Every event carries its job and its place in the job's sequence (1, 2, 3, ... with no gaps).",
  fields: (t) => ({
    seq: t.exposeInt('seq', {
      description: "Place in the job's event sequence, from 1; pass the last one seen as `after` to resume.",
    }),
    jobId: t.exposeID('jobId', { description: 'The job the event belongs to.' }),
  }),
});

const TokenDelta = builder.objectRef<Of<'token'>>('TokenDelta').implement({
  description: 'Tokens one decoder step committed on one line.',
  interfaces: [JobEvent],
  fields: (t) => ({
    page: t.exposeInt('page', { description: '0-based page number in the document.' }),
    line: t.exposeInt('line', { description: 'Line number on the page, in reading order.' }),
    text: t.exposeString('text', { description: 'Text of the tokens committed, to append to the line.' }),
    fromDraft: t.exposeBooleanList('fromDraft', {
      description: 'Per token: true when it came from an accepted draft, false when the verifier chose it.',
    }),
    accepted: t.int({
      description: 'Tokens of this delta that came from the accepted draft.',
      resolve: (e) => e.fromDraft.filter(Boolean).length,
    }),
    drafted: t.int({
      description:
        'How deep the draft offered at this step was (0: no draft); accepted/drafted per step gives acceptance live.',
      resolve: (e) => e.drafted ?? 0,
    }),
  }),
});

const RegionDone = builder.objectRef<Of<'region'>>('RegionDone').implement({
  description: 'A block of a page has been read: its markdown, ready to show.',
  interfaces: [JobEvent],
  fields: (t) => ({
    page: t.exposeInt('page', { description: '0-based page number in the document.' }),
    block: t.exposeInt('block', { description: 'Reading order on the page.' }),
    markdown: t.exposeString('markdown', { description: 'The block as markdown.' }),
  }),
});

const PageDone = builder.objectRef<Of<'page'>>('PageDone').implement({
  description: 'A page has been read: its markdown, ready to show.',
  interfaces: [JobEvent],
  fields: (t) => ({
    page: t.exposeInt('page', { description: '0-based page number in the document.' }),
    markdown: t.exposeString('markdown', { description: 'The page as markdown.' }),
  }),
});

const JobDone = builder.objectRef<Of<'done'>>('JobDone').implement({
  description: 'The job succeeded: its decoding metrics and the finished job. The last event.',
  interfaces: [JobEvent],
  fields: (t) => ({
    metrics: t.field({ type: SpeculationMetrics, description: 'How the job was decoded.', resolve: (e) => e.metrics }),
    job: t.field({
      type: ParseJob,
      nullable: true,
      description: 'The finished job; null when it is no longer stored.',
      resolve: (e, _args, ctx) => ctx.jobs.get(ctx.tenant ?? '', e.jobId),
    }),
  }),
});

const JobFailed = builder.objectRef<Of<'failed'>>('JobFailed').implement({
  description: 'The job failed: why, as a code and in words. The last event.',
  interfaces: [JobEvent],
  fields: (t) => jobErrorFields(t),
});

const JobCancelled = builder.objectRef<Of<'cancelled'>>('JobCancelled').implement({
  description: 'The job was cancelled before it finished. The last event.',
  interfaces: [JobEvent],
  fields: (t) => ({ cancelled: t.boolean({ description: 'Always true.', resolve: () => true }) }),
});

const JobRestarted = builder.objectRef<Of<'restarted'>>('JobRestarted').implement({
  description:
    'The job is read again from the start (its worker stopped mid-job): drop the text its token deltas built so far.',
  interfaces: [JobEvent],
  fields: (t) => ({
    attempt: t.exposeInt('attempt', {
      description: 'Times a worker has now started reading the job (2 on the first restart).',
    }),
  }),
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
  description: "One event of a job's stream; branch on __typename.",
  types: [TokenDelta, RegionDone, PageDone, JobDone, JobFailed, JobCancelled, JobRestarted],
  resolveType: (e) => TYPE_NAMES[e.type],
});

builder.subscriptionFields((t) => ({
  parseJobEvents: t.withAuth({ tenant: true }).field({
    type: ParseJobEvent,
    description:
      "The job's events so far (after `after`), then live ones; ends with JobDone, JobFailed or JobCancelled.",
    args: {
      id: t.arg.id({ required: true, description: 'The job to follow.' }),
      after: t.arg.int({ required: false, description: 'The last seq you saw; 0 or absent replays everything.' }),
    },
    subscribe: (_root, args, ctx) => subscribeParseJobEvents(String(args.id), args.after, ctx),
    resolve: (event: Sequenced) => event,
  }),
}));
