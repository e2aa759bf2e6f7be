/**
 * How a job is decoded, chosen per request. Every choice and parameter here is derived from the engine's registry
 * (src/engine/strategies/registry.ts): a drafter or verifier added there is an enum value here, and a strategy's
 * parameters are an input of their own, with the same ranges the engine checks.
 */
import {
  DEFAULT_DRAFTER,
  DEFAULT_VERIFIER,
  DRAFT_LENGTH,
  knobNumber,
  knobRange,
  MAX_REFERENCE_CHARS,
  VISUAL_KEEP,
} from '../src/engine/strategies/options.js';
import { drafterSpecs, type Knob, parameterGroups, verifierSpecs } from '../src/engine/strategies/registry.js';
import { builder } from './builder.js';

/** A strategy's name as a GraphQL enum value: "dual-diffusion" is DUAL_DIFFUSION. */
export const enumValueOf = (name: string): string => name.toUpperCase().replace(/-/g, '_');

const valuesOf = (
  specs: readonly { name: string; description: string }[],
): Record<string, { value: string; description: string }> =>
  Object.fromEntries(specs.map((s) => [enumValueOf(s.name), { value: s.name, description: s.description }]));

export const DrafterEnum = builder.enumType('Drafter', {
  description:
    'What proposes tokens for the verifier to check (the engine query says ' +
    'which this bundle can run). Lossless pairings give the same text with ' +
    'any drafter; only speed changes.',
  values: valuesOf(drafterSpecs()),
});

export const VerifierEnum = builder.enumType('Verifier', {
  description: 'What decides how much of a draft is kept, and which token follows it.',
  values: valuesOf(verifierSpecs()),
});

const pascal = (name: string): string =>
  name
    .split('-')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
const described = (k: Knob): string => `${k.description} ${knobRange(k)}; default ${k.default}.`;

/** One input per parameterised strategy (RelaxedInput, JointInput), its fields the strategy's knobs. */
const parameterInputs = parameterGroups().map((g) => ({
  name: g.name,
  ref: builder.inputType(`${pascal(g.name)}Input`, {
    description: `Parameters of "${g.name}": ${g.description}`,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(g.params).map(([name, k]) => {
          const options = { required: false, description: described(k), validate: { schema: knobNumber(k) } } as const;
          return [name, k.type === 'int' ? t.int(options) : t.float(options)];
        }),
      ),
  }),
}));

export const VisualTokensInput = builder.inputType('VisualTokensInput', {
  description:
    'Focal pruning: each decoder step attends only to the visual tokens ' +
    'the previous step looked at most (and their neighbours). Lossy: the ' +
    'text can change; the metrics report the share kept.',
  fields: (t) => ({
    keep: t.float({
      required: false,
      description: described(VISUAL_KEEP),
      validate: { schema: knobNumber(VISUAL_KEEP) },
    }),
  }),
});

export const DecodingInput = builder.inputType('DecodingInput', {
  description:
    'Lossless pairings (any drafter with the GREEDY or TREE verifier) give ' +
    'the same text as drafter NONE; only speed changes. Any drafter with ' +
    'the JOINT verifier gives the text of drafter NONE with the JOINT ' +
    'verifier.',
  fields: (t) => ({
    drafter: t.field({
      type: DrafterEnum,
      required: false,
      description:
        `Default ${enumValueOf(DEFAULT_DRAFTER)} (the fastest measured), or ` +
        `NONE where the bundle has no CTC head.`,
    }),
    verifier: t.field({
      type: VerifierEnum,
      required: false,
      description:
        `Default ${enumValueOf(DEFAULT_VERIFIER)} (the most accurate ` +
        `measured), or GREEDY where the bundle has no CTC head or reads ` +
        `regions; GREEDY gives plain greedy AR text with any drafter.`,
    }),
    draftLength: t.int({
      required: false,
      description: `${DRAFT_LENGTH.description} ${knobRange(DRAFT_LENGTH)}.`,
      validate: { schema: knobNumber(DRAFT_LENGTH) },
    }),
    visualTokens: t.field({
      type: VisualTokensInput,
      required: false,
      description: 'Focal pruning; when absent, every step attends to all visual tokens.',
    }),
    reference: t.string({
      required: false,
      description: "Text the REFERENCE drafter drafts from (a PDF's own text layer is used when this is absent).",
      validate: { maxLength: MAX_REFERENCE_CHARS },
    }),
    ...Object.fromEntries(
      parameterInputs.map((p) => [
        p.name,
        t.field({
          type: p.ref,
          required: false,
          description:
            `Parameters of ${enumValueOf(p.name)}, used only when it is chosen; ` + `defaults fill what is absent.`,
        }),
      ]),
    ),
  }),
});
