/** How a job was decoded: forwards, drafts, acceptance; the numbers that say what speculation bought. */
import { builder } from './builder.js';

type Metrics = Record<string, unknown>;
const num = (m: Metrics, k: string): number => (typeof m[k] === 'number' ? (m[k] as number) : 0);

export const SpeculationMetrics = builder.objectRef<Metrics>('SpeculationMetrics').implement({
  description: 'How a job was decoded: forwards, drafts and acceptance, the numbers that say what speculation bought.',
  fields: (t) => ({
    lines: t.int({ description: 'Text lines read.', resolve: (m) => num(m, 'lines') }),
    forwards: t.int({
      description: 'Decoder forwards this job took part in (a batched forward counts once).',
      resolve: (m) => num(m, 'forwards'),
    }),
    sequenceForwards: t.int({ description: 'Forwards summed over lines.', resolve: (m) => num(m, 'sequenceForwards') }),
    committedTokens: t.int({
      description: "Tokens committed (accepted draft tokens plus the verifier's own), end-of-line tokens included.",
      resolve: (m) => num(m, 'committedTokens'),
    }),
    drafts: t.int({ description: 'Line-forwards that checked a draft.', resolve: (m) => num(m, 'drafts') }),
    draftTokens: t.int({
      description: 'Tokens drafted (every node of a tree draft counted).',
      resolve: (m) => num(m, 'draftTokens'),
    }),
    acceptedTokens: t.int({
      description: 'Drafted tokens the verifier accepted.',
      resolve: (m) => num(m, 'acceptedTokens'),
    }),
    tokensPerForward: t.float({
      description: 'Committed tokens per line-forward (1.0 for plain greedy decoding).',
      resolve: (m) => num(m, 'meanAcceptanceLength'),
    }),
    acceptanceRate: t.float({
      description: 'Accepted / drafted tokens.',
      resolve: (m) => (num(m, 'draftTokens') ? num(m, 'acceptedTokens') / num(m, 'draftTokens') : 0),
    }),
    acceptanceByPosition: t.floatList({
      description: 'At 0-based index i: the share of drafts reaching position i whose token there was accepted.',
      resolve: (m) => (Array.isArray(m.acceptanceByPosition) ? (m.acceptanceByPosition as number[]) : []),
    }),
    decodeMs: t.float({
      description: 'Decoder forwards plus drafting (shared work counted whole).',
      resolve: (m) => num(m, 'decodeMs'),
    }),
    draftMs: t.float({
      description: 'The drafting share of decodeMs (drafters that run a model of their own).',
      resolve: (m) => num(m, 'draftMs'),
    }),
    visionMs: t.float({
      description:
        "Milliseconds of the vision passes the job's lines were read with (a " +
        'pass shared with other jobs counted whole).',
      resolve: (m) => num(m, 'visionMs'),
    }),
    visualTokenRatio: t.float({
      description: "Mean share of a line's visual tokens each decoder step attended to (1 without focal pruning).",
      resolve: (m) => (typeof m.visualTokenRatio === 'number' ? m.visualTokenRatio : 1),
    }),
  }),
});
