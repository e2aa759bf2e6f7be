/**
 * Decoding options, chosen per request and validated here: an unknown name, or a pairing that cannot work
 * with this bundle, gets an error that lists the valid choices.
 */
import { z } from 'zod';
import type { BundleConfig } from './bundle.js';
import { EngineError } from './errors.js';
import { MAX_DRAFT_LENGTH, type DraftLengthSetting } from './draft-length.js';

export const DRAFTERS = ['none', 'ctc', 'ngram', 'reference', 'mtp', 'pmtp', 'routed', 'diffusion', 'dual-diffusion'] as const;
export const VERIFIERS = ['greedy', 'tree', 'relaxed', 'joint'] as const;
/**
 * The joint verifier's CTC weight by default: the best of 0.3/0.5/0.7/0.9 on held-out synthetic lines (a seed of
 * their own, not the evaluation set) for the bundle of 2026-11-30.
 */
export const JOINT_CTC_WEIGHT = 0.7;
/** Longest reference text a request may send for the reference drafter (a PDF's text layer is cut to it). */
export const MAX_REFERENCE_CHARS = 2_000_000;
/** Smallest share of a line's visual tokens a decoder step may keep (focal pruning). */
export const MIN_VISUAL_KEEP = 0.02;
/**
 * What a request gets when it names no drafter: the CTC head's reading as the draft. With any verifier it is
 * the fastest drafter we measure (bench:spec), so nobody should have to ask for it.
 */
export const DEFAULT_DRAFTER = 'ctc' satisfies DrafterName;
/**
 * What a request gets when it names no verifier: joint CTC/attention scoring, where the bundle has a CTC head.
 * It is more accurate than plain greedy decoding on every evaluation set we measure (and faster with the ctc
 * drafter, whose draft it accepts more of). `verifier: "greedy"` gives plain greedy AR text, byte for byte, with
 * any drafter; `drafter: "none", verifier: "greedy"` is the plain AR baseline.
 */
export const DEFAULT_VERIFIER = 'joint' satisfies VerifierName;
export type DrafterName = (typeof DRAFTERS)[number];
export type VerifierName = (typeof VERIFIERS)[number];

/** Drafters that need a head the bundle may not have. */
const NEEDS_HEAD: Partial<Record<DrafterName, 'mtp' | 'diffusion'>> = {
  mtp: 'mtp',
  pmtp: 'mtp',
  routed: 'mtp',
  diffusion: 'diffusion',
  'dual-diffusion': 'diffusion',
};

const list = (xs: readonly string[]): string => xs.map((x) => `"${x}"`).join(', ');

export const DecodingOptionsSchema = z.object({
  drafter: z.string().optional(),
  verifier: z.string().optional(),
  visualTokens: z.object({
    keep: z.number().min(MIN_VISUAL_KEEP).max(1).default(1),
  }).strict().prefault({}),
  draftLength: z.union([z.literal('auto'), z.number().int().min(1).max(MAX_DRAFT_LENGTH)]).default('auto'),
  relaxed: z.object({
    topK: z.number().int().min(1).max(100).default(5),
    minRatio: z.number().gt(0).max(1).default(0.3),
  }).prefault({}),
  joint: z.object({
    ctcWeight: z.number().min(0).max(1).default(JOINT_CTC_WEIGHT),
  }).prefault({}),
  reference: z.string().max(MAX_REFERENCE_CHARS).optional(),
}).strict();

export type DecodingOptionsInput = z.input<typeof DecodingOptionsSchema>;

export interface DecodingOptions {
  drafter: DrafterName;
  verifier: VerifierName;
  draftLength: DraftLengthSetting;
  relaxed: { topK: number; minRatio: number };
  /** The joint verifier: the CTC head's share of each token's score. */
  joint: { ctcWeight: number };
  /** keep < 1: each decoder step attends only to that share of the line's visual tokens (focal pruning). */
  visualTokens: { keep: number };
  reference?: string;
}

/** Verifiers that score one line's CTC frames against its text; a region's sequence spans several lines. */
const LINE_ONLY_VERIFIERS = new Set<string>(['joint', 'relaxed']);

/**
 * A multi-line region read's decoding (region bundles): greedy unless told, and never a verifier that scores one
 * line's CTC frames. The API checks requests with it before queueing; the engine reads regions with it.
 */
export function regionDecoding(input: DecodingOptionsInput | undefined): DecodingOptionsInput {
  const d = { ...input, verifier: input?.verifier ?? 'greedy' }; // a key present but unset is still "not told"
  if (LINE_ONLY_VERIFIERS.has(d.verifier)) {
    throw new EngineError('INVALID_OPTIONS', `verifier "${d.verifier}" scores one line's CTC frames; regions take "greedy" or "tree"`);
  }
  return d;
}

export function resolveDecoding(input: DecodingOptionsInput | undefined, config: BundleConfig): DecodingOptions {
  const parsed = DecodingOptionsSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join('.') || 'decoding'}: ${i.message}`).join('; ');
    throw new EngineError('INVALID_OPTIONS', `invalid decoding options: ${msg} (draftLength is 1..${MAX_DRAFT_LENGTH} or "auto"; visualTokens.keep is ${MIN_VISUAL_KEEP}..1)`);
  }
  const o = {
    ...parsed.data,
    drafter: parsed.data.drafter ?? (config.heads.ctc ? DEFAULT_DRAFTER : 'none'),
    verifier: parsed.data.verifier ?? (config.heads.ctc ? DEFAULT_VERIFIER : 'greedy'),
  };
  if (!(DRAFTERS as readonly string[]).includes(o.drafter)) {
    throw new EngineError('INVALID_OPTIONS', `unknown drafter "${o.drafter}"; the drafters are ${list(DRAFTERS)}`);
  }
  if (!(VERIFIERS as readonly string[]).includes(o.verifier)) {
    throw new EngineError('INVALID_OPTIONS', `unknown verifier "${o.verifier}"; the verifiers are ${list(VERIFIERS)}`);
  }
  const drafter = o.drafter as DrafterName;
  const head = NEEDS_HEAD[drafter];
  if (head && !config.heads[head]) {
    const have = Object.entries(config.heads).filter(([, v]) => v).map(([k]) => k);
    const usable = DRAFTERS.filter((d) => !NEEDS_HEAD[d] || config.heads[NEEDS_HEAD[d] as 'mtp' | 'diffusion']);
    throw new EngineError('INVALID_OPTIONS', `drafter "${drafter}" needs the model's ${head} head, which bundle "${config.name}" does not have (it has: ${have.join(', ')}); with this bundle the drafters are ${list(usable)}`);
  }
  if (drafter === 'ctc' && !config.heads.ctc) {
    throw new EngineError('INVALID_OPTIONS', `drafter "ctc" needs the model's CTC head, which bundle "${config.name}" does not have`);
  }
  if (drafter === 'reference' && !o.reference?.trim()) {
    throw new EngineError('INVALID_OPTIONS', 'drafter "reference" drafts from text you supply: set decoding.reference (for example a PDF\'s text layer)');
  }
  if (o.verifier === 'joint' && !config.heads.ctc) {
    throw new EngineError('INVALID_OPTIONS', `verifier "joint" scores with the model's CTC head, which bundle "${config.name}" does not have`);
  }
  if (o.verifier === 'relaxed' && drafter === 'none') {
    throw new EngineError('INVALID_OPTIONS', 'verifier "relaxed" has nothing to relax without a drafter; choose a drafter other than "none", or verifier "greedy"');
  }
  return { drafter, verifier: o.verifier as VerifierName, draftLength: o.draftLength, relaxed: o.relaxed, joint: o.joint, visualTokens: o.visualTokens, reference: o.reference };
}

export interface DrafterAvailability {
  name: DrafterName;
  available: boolean;
  /** Why it cannot be used with this bundle, when it cannot. */
  reason?: string;
}

/** What a client may choose with this bundle: every drafter, and whether this bundle can run it. */
export function strategies(config: BundleConfig): { drafters: DrafterAvailability[]; verifiers: VerifierName[]; visualKeep: { min: number; max: number }; focalLayers: number[]; defaults: { drafter: string; verifier: string } } {
  const drafters = DRAFTERS.map((name): DrafterAvailability => {
    const head = NEEDS_HEAD[name] ?? (name === 'ctc' ? 'ctc' : undefined);
    if (head && !config.heads[head]) return { name, available: false, reason: `bundle "${config.name}" has no ${head} head` };
    return { name, available: true };
  });
  const defaults = resolveDecoding(undefined, config);
  return { drafters, verifiers: [...VERIFIERS], visualKeep: { min: MIN_VISUAL_KEEP, max: 1 }, focalLayers: [...config.focalLayers], defaults: { drafter: defaults.drafter, verifier: defaults.verifier } };
}
