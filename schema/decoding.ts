/** How a job is decoded, chosen per request; validated against the served bundle with the choices listed. */
import { MAX_DRAFT_LENGTH } from '../src/engine/draft-length.js';
import { DEFAULT_DRAFTER, DEFAULT_VERIFIER, DRAFTERS, MAX_REFERENCE_CHARS, MIN_VISUAL_KEEP, VERIFIERS } from '../src/engine/options.js';
import { builder } from './builder.js';

const quoted = (xs: readonly string[]): string => xs.map((x) => `"${x}"`).join(', ');

export const RelaxedInput = builder.inputType('RelaxedInput', {
  description: 'The relaxed verifier accepts a drafted token that is among the top-K and at least minRatio as likely as the best.',
  fields: (t) => ({
    topK: t.int({ required: false, validate: { int: true, min: 1, max: 100 } }),
    minRatio: t.float({ required: false, validate: { refine: [(v) => v > 0 && v <= 1, { message: 'minRatio must be in (0, 1]' }] } }),
  }),
});

export const JointInput = builder.inputType('JointInput', {
  description: 'The joint verifier commits, at each position, the token that scores best under the decoder and the CTC head together (hybrid CTC/attention decoding): more accurate than plain greedy decoding, and a different text.',
  fields: (t) => ({
    ctcWeight: t.float({ required: false, description: 'The CTC head\'s share of the score, 0..1 (0: plain greedy). Default 0.7.', validate: { refine: [(v) => v >= 0 && v <= 1, { message: 'ctcWeight must be in 0..1' }] } }),
  }),
});

export const VisualTokensInput = builder.inputType('VisualTokensInput', {
  description: 'Focal pruning: each decoder step attends only to the visual tokens the previous step looked at most (and their neighbours). Lossy: the text can change; the metrics report the share kept.',
  fields: (t) => ({
    keep: t.float({ required: false, description: `Share of each line's visual tokens a step keeps, ${MIN_VISUAL_KEEP}..1. Default 1 (all: no pruning).`, validate: { refine: [(v) => v >= MIN_VISUAL_KEEP && v <= 1, { message: `keep must be in ${MIN_VISUAL_KEEP}..1` }] } }),
  }),
});

export const DecodingInput = builder.inputType('DecodingInput', {
  description: 'Lossless pairings (any drafter with the greedy or tree verifier) give the same text as drafter "none"; only speed changes. Any drafter with the joint verifier gives the text of drafter "none" with the joint verifier.',
  fields: (t) => ({
    drafter: t.string({ required: false, description: `One of ${quoted(DRAFTERS)} (the engine query says which this bundle can run). Default "${DEFAULT_DRAFTER}" (the fastest measured).` }),
    verifier: t.string({ required: false, description: `One of ${quoted(VERIFIERS)}. Default "${DEFAULT_VERIFIER}" (the most accurate measured); "greedy" gives plain greedy AR text with any drafter, and drafter "none" with verifier "greedy" is plain AR decoding.` }),
    draftLength: t.int({ required: false, description: `Tokens per draft, 1..${MAX_DRAFT_LENGTH}; absent = chosen per step from the measured cost of a forward.`, validate: { int: true, min: 1, max: MAX_DRAFT_LENGTH } }),
    visualTokens: t.field({ type: VisualTokensInput, required: false }),
    reference: t.string({ required: false, description: 'Text the reference drafter drafts from (a PDF\'s own text layer is used when this is absent).', validate: { maxLength: MAX_REFERENCE_CHARS } }),
    relaxed: t.field({ type: RelaxedInput, required: false }),
    joint: t.field({ type: JointInput, required: false }),
  }),
});
