/**
 * Decoding options, chosen per request and resolved here, once: an unknown name, or a pairing that cannot work
 * with this bundle, gets an error that lists the valid choices. What a request may send is derived from the
 * registry (its strategies and their parameters) and from the few knobs of decoding as a whole below.
 */
import * as z from 'zod';
import type { BundleConfig } from '../bundle/bundle.js';
import { MAX_DRAFT_LENGTH, type DraftLengthSetting } from './draft-length.js';
import { EngineError } from '../errors.js';
import {
  drafterSpec,
  drafterSpecs,
  type Knob,
  parameterGroups,
  registryVersion,
  verifierSpec,
  verifierSpecs,
} from './registry.js';

/** Longest reference text a request may send for the reference drafter (a PDF's text layer is cut to it). */
export const MAX_REFERENCE_CHARS = 2_000_000;
/** Smallest share of a line's visual tokens a decoder step may keep (focal pruning). */
export const MIN_VISUAL_KEEP = 0.02;

/** Focal pruning's knob (`decoding.visualTokens.keep`). */
export const VISUAL_KEEP: Knob = {
  type: 'float',
  min: MIN_VISUAL_KEEP,
  max: 1,
  default: 1,
  flag: 'visual-keep',
  description: "Share of each line's visual tokens a decoder step attends to (1: all, no pruning). Lossy below 1.",
};
/** Tokens per draft (`decoding.draftLength`); absent or "auto": chosen per step from the measured cost of a forward. */
export const DRAFT_LENGTH: Knob = {
  type: 'int',
  min: 1,
  max: MAX_DRAFT_LENGTH,
  default: 0,
  flag: 'draft-length',
  description: 'Tokens per draft; absent: chosen per step from the measured cost of a forward ("auto").',
};

/**
 * What a request gets when it names no drafter: the CTC head's reading as the draft. With any verifier it is
 * the fastest drafter we measure (bench:spec), so nobody should have to ask for it.
 */
export const DEFAULT_DRAFTER = 'ctc';
/**
 * What a request gets when it names no verifier: joint CTC/attention scoring, where the bundle has a CTC head.
 * It is more accurate than plain greedy decoding on every evaluation set we measure (and faster with the ctc
 * drafter, whose draft it accepts more of). `verifier: "greedy"` gives plain greedy AR text, byte for byte, with
 * any drafter; `drafter: "none", verifier: "greedy"` is the plain AR baseline.
 */
export const DEFAULT_VERIFIER = 'joint';

/** A strategy's parameters as a request sends them (`{ topK: 3 }` under `relaxed`). */
export type ParamsInput = { readonly [param: string]: number | undefined };

/** Decoding options as a request sends them; a strategy's parameters go under its name (`relaxed`, `joint`). */
export interface DecodingOptionsInput {
  readonly drafter?: string;
  readonly verifier?: string;
  readonly draftLength?: number | 'auto';
  readonly visualTokens?: { readonly keep?: number };
  readonly reference?: string;
  readonly [strategy: string]: string | number | ParamsInput | { readonly keep?: number } | undefined;
}

/** Options as sent or as stored (a job keeps them as data), not yet checked: resolveDecoding checks them. */
export type UncheckedDecoding = DecodingOptionsInput | DecodingOptions | object;

/** Options resolved against one bundle: every choice made, every parameter present. */
export interface DecodingOptions {
  readonly drafter: string;
  readonly verifier: string;
  readonly draftLength: DraftLengthSetting;
  /** keep < 1: each decoder step attends only to that share of the line's visual tokens (focal pruning). */
  readonly visualTokens: { readonly keep: number };
  readonly reference?: string;
  /** Each parameterised strategy's parameters, by strategy name (registry.paramsOf reads them). */
  readonly params: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** The bundle and kind of read they were resolved for: options resolved for it are used as they are. */
  readonly for: { readonly bundle: string; readonly regions: boolean };
}

const list = (xs: readonly string[]): string => xs.map((x) => `"${x}"`).join(', ');
const headName = (h: string): string => (h === 'ctc' ? 'CTC' : h);

/** A knob's check, as zod sees it. */
export function knobNumber(k: Knob): z.ZodNumber {
  const n = k.type === 'int' ? z.number().int() : z.number();
  return (k.minExclusive ? n.gt(k.min) : n.min(k.min)).max(k.max);
}

const knobSchema = (k: Knob): z.ZodDefault<z.ZodNumber> => knobNumber(k).default(k.default);

/** A knob's range in words ("1..100", "(0, 1]"). */
export function knobRange(k: Knob): string {
  return k.minExclusive ? `(${k.min}, ${k.max}]` : `${k.min}..${k.max}`;
}

let schema: { version: number; zod: z.ZodType<Record<string, unknown>> } | null = null;

/** The request's shape, built from the registry (rebuilt if a strategy was registered since). */
function optionsSchema(): z.ZodType<Record<string, unknown>> {
  if (schema?.version === registryVersion()) return schema.zod;
  const groups = Object.fromEntries(
    parameterGroups().map((g) => [
      g.name,
      z
        .object(Object.fromEntries(Object.entries(g.params).map(([k, knob]) => [k, knobSchema(knob)])))
        .strict()
        .prefault({}),
    ]),
  );
  const zod = z
    .object({
      drafter: z.string().optional(),
      verifier: z.string().optional(),
      visualTokens: z
        .object({ keep: knobSchema(VISUAL_KEEP) })
        .strict()
        .prefault({}),
      draftLength: z
        .union([z.literal('auto'), z.number().int().min(DRAFT_LENGTH.min).max(DRAFT_LENGTH.max)])
        .default('auto'),
      reference: z.string().max(MAX_REFERENCE_CHARS).optional(),
      ...groups,
    })
    .strict();
  schema = { version: registryVersion(), zod };
  return zod;
}

/** Options already resolved for this bundle and this kind of read. */
function resolvedFor(input: unknown, config: BundleConfig, regions: boolean): input is DecodingOptions {
  const f = (input as Partial<DecodingOptions> | undefined)?.for;
  return Boolean(f && f.bundle === config.name && f.regions === regions);
}

/** Resolved options as a request would send them (to resolve them again for another bundle). */
export function asInput(o: DecodingOptions): DecodingOptionsInput {
  return {
    drafter: o.drafter,
    verifier: o.verifier,
    draftLength: o.draftLength,
    visualTokens: o.visualTokens,
    ...(o.reference !== undefined ? { reference: o.reference } : {}),
    ...o.params,
  };
}

/**
 * Resolve a request's options against a bundle, for lines or (region bundles) multi-line regions: a region read
 * is greedy unless told, and never uses a verifier that scores one line's CTC frames. Options already resolved
 * for this bundle and kind of read come back as they are.
 */
export function resolveDecoding(
  input: UncheckedDecoding | undefined,
  config: BundleConfig,
  opts: { regions?: boolean } = {},
): DecodingOptions {
  const regions = opts.regions ?? false;
  if (resolvedFor(input, config, regions)) return input;
  const given: DecodingOptionsInput =
    input && 'for' in input && 'params' in input
      ? asInput(input as unknown as DecodingOptions)
      : ((input ?? {}) as DecodingOptionsInput);
  const parsed = optionsSchema().safeParse(given);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join('.') || 'decoding'}: ${i.message}`).join('; ');
    throw new EngineError(
      'INVALID_OPTIONS',
      `invalid decoding options: ${msg} (draftLength is ` +
        `${knobRange(DRAFT_LENGTH)} or "auto"; visualTokens.keep is ` +
        `${knobRange(VISUAL_KEEP)})`,
    );
  }
  const data = parsed.data as {
    drafter?: string;
    verifier?: string;
    draftLength: DraftLengthSetting;
    visualTokens: { keep: number };
    reference?: string;
  } & Record<string, unknown>;
  const drafter = data.drafter ?? (config.heads.ctc ? DEFAULT_DRAFTER : 'none');
  const verifier = data.verifier ?? (config.heads.ctc && !regions ? DEFAULT_VERIFIER : 'greedy');
  const d = drafterSpec(drafter);
  const v = verifierSpec(verifier);
  if (!d)
    throw new EngineError(
      'INVALID_OPTIONS',
      `unknown drafter "${drafter}"; the drafters are ${list(drafterSpecs().map((s) => s.name))}`,
    );
  if (!v)
    throw new EngineError(
      'INVALID_OPTIONS',
      `unknown verifier "${verifier}"; the verifiers are ${list(verifierSpecs().map((s) => s.name))}`,
    );
  if (d.needs && !config.heads[d.needs]) {
    const have = Object.entries(config.heads)
      .filter(([, on]) => on)
      .map(([k]) => k);
    const usable = drafterSpecs()
      .filter((s) => !s.needs || config.heads[s.needs])
      .map((s) => s.name);
    throw new EngineError(
      'INVALID_OPTIONS',
      `drafter "${drafter}" needs the model's ${headName(d.needs)} head, ` +
        `which bundle "${config.name}" does not have (it has: ` +
        `${have.join(', ')}); with this bundle the drafters are ${list(usable)}`,
    );
  }
  if (d.needsReference && !data.reference?.trim()) {
    throw new EngineError(
      'INVALID_OPTIONS',
      `drafter "${drafter}" drafts from text you supply: set decoding.reference (for example a PDF's text layer)`,
    );
  }
  if (v.needs && !config.heads[v.needs]) {
    throw new EngineError(
      'INVALID_OPTIONS',
      `verifier "${verifier}" scores with the model's ${headName(v.needs)} ` +
        `head, which bundle "${config.name}" does not have`,
    );
  }
  if (v.needsDraft && drafter === 'none') {
    throw new EngineError(
      'INVALID_OPTIONS',
      `verifier "${verifier}" has nothing to relax without a drafter; choose ` +
        `a drafter other than "none", or verifier "greedy"`,
    );
  }
  if (regions && v.lineOnly) {
    throw new EngineError(
      'INVALID_OPTIONS',
      `verifier "${verifier}" scores one line's CTC frames; regions take ${list(
        verifierSpecs()
          .filter((s) => !s.lineOnly)
          .map((s) => s.name),
      )}`,
    );
  }
  const params = Object.fromEntries(parameterGroups().map((g) => [g.name, data[g.name] as Record<string, number>]));
  return {
    drafter,
    verifier,
    draftLength: data.draftLength,
    visualTokens: data.visualTokens,
    ...(data.reference !== undefined ? { reference: data.reference } : {}),
    params,
    for: { bundle: config.name, regions },
  };
}

export interface DrafterAvailability {
  name: string;
  description: string;
  available: boolean;
  /** Why it cannot be used with this bundle, when it cannot. */
  reason?: string;
}

export interface StrategyChoices {
  drafters: DrafterAvailability[];
  verifiers: { name: string; description: string }[];
  visualKeep: { min: number; max: number };
  focalLayers: number[];
  defaults: { drafter: string; verifier: string };
}

/** What a client may choose with this bundle: every drafter, and whether this bundle can run it. */
export function strategies(config: BundleConfig): StrategyChoices {
  const drafters = drafterSpecs().map((s): DrafterAvailability => {
    if (s.needs && !config.heads[s.needs])
      return {
        name: s.name,
        description: s.description,
        available: false,
        reason: `bundle "${config.name}" has no ${s.needs} head`,
      };
    return { name: s.name, description: s.description, available: true };
  });
  const verifiers = verifierSpecs().map((s) => ({ name: s.name, description: s.description }));
  const defaults = resolveDecoding(undefined, config, { regions: Boolean(config.region) });
  return {
    drafters,
    verifiers,
    visualKeep: { min: VISUAL_KEEP.min, max: VISUAL_KEEP.max },
    focalLayers: [...config.focalLayers],
    defaults: { drafter: defaults.drafter, verifier: defaults.verifier },
  };
}
