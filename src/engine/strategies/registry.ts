/**
 * Every drafter and verifier a request may name, with what it needs from the bundle and the parameters it takes
 * (their ranges, defaults and meaning). This list is the one declaration of the decoding choices: the option
 * validation (options.ts), the GraphQL enums and inputs, the CLI's flags and help and the playground's pickers
 * are all derived from it. A new drafter is its own file plus one entry here (or one `registerDrafter` call).
 */
import type { Bundle } from '../bundle/bundle.js';
import { CtcDrafter } from './drafters/ctc.js';
import { DiffusionDrafter } from './drafters/diffusion.js';
import type { Drafter } from './drafters/drafter.js';
import { MtpDrafter } from './drafters/mtp.js';
import { NgramDrafter } from './drafters/ngram.js';
import { NoDrafter } from './drafters/none.js';
import { ReferenceDrafter } from './drafters/reference.js';
import { EngineError } from '../errors.js';
import type { DecodingOptions } from './options.js';
import { GreedyVerifier } from './verifiers/greedy.js';
import { JointVerifier, type JointParams } from './verifiers/joint.js';
import { RelaxedVerifier, type RelaxedParams } from './verifiers/relaxed.js';
import { TreeVerifier } from './verifiers/tree.js';
import type { Verifier } from './verifiers/verifier.js';

/** A head of the model that some strategies run on; a bundle may ship without it. */
export type Head = 'ctc' | 'mtp' | 'diffusion';

/** A numeric parameter of a strategy (or of decoding as a whole): declared once, checked and offered everywhere. */
export interface Knob {
  readonly type: 'int' | 'float';
  readonly min: number;
  readonly max: number;
  /** The minimum itself is not allowed (a ratio that must be above 0). */
  readonly minExclusive?: boolean;
  readonly default: number;
  readonly description: string;
  /** The CLI flag, without its dashes. */
  readonly flag: string;
}

interface StrategySpec {
  /** Lower-case, words joined by '-': the name requests use (the GraphQL enum value is its upper-case form). */
  readonly name: string;
  readonly description: string;
  /** The model head it runs on; with a bundle that lacks it, the strategy is refused with the reason. */
  readonly needs?: Head;
  /** Its parameters, sent as `decoding.<name>.<parameter>` (and as CLI flags). */
  readonly params?: Readonly<Record<string, Knob>>;
}

export interface DrafterSpec extends StrategySpec {
  /** It drafts from text the request supplies (`decoding.reference`). */
  readonly needsReference?: boolean;
  /** A fresh drafter for one request (drafters keep per-line state). */
  create(bundle: Bundle, options: DecodingOptions): Drafter;
}

export interface VerifierSpec extends StrategySpec {
  /** Whatever the drafter, the text is plain greedy decoding's, byte for byte. */
  readonly lossless?: boolean;
  /** It scores one line's CTC frames, so it cannot verify a multi-line region's sequence. */
  readonly lineOnly?: boolean;
  /** It only changes what a draft earns: with no drafter it has nothing to do. */
  readonly needsDraft?: boolean;
  create(bundle: Bundle, options: DecodingOptions): Verifier;
}

/** pmtp's confidence gate: a draft ends where the head's top probability falls below this. */
export const PMTP_GATE = 0.5;
/** routed: the share of a line's visual tokens the MTP head attends to. */
export const ROUTED_KEEP = 0.2;
/** dual-diffusion: alternatives at up to this many of the draft's least confident positions. */
export const DUAL_DIFFUSION_BRANCHES = 2;
/**
 * The joint verifier's CTC weight by default: the best of 0.3/0.5/0.7/0.9 on held-out synthetic lines (a seed of
 * their own, not the evaluation set) for the bundle of 2026-11-30.
 */
export const JOINT_CTC_WEIGHT = 0.7;

/** A strategy's parameters as resolved (every one present, defaults filled); `P` is the strategy's own type. */
export function paramsOf<P>(o: DecodingOptions, strategy: string): P {
  return o.params[strategy] as P;
}

const eos = (b: Bundle): number => b.config.specialIds.eos;

const drafters = new Map<string, DrafterSpec>();
const verifiers = new Map<string, VerifierSpec>();
let version = 0;

/** Names options.ts reserves for decoding as a whole: no strategy may take them (its parameters would collide). */
const RESERVED = new Set(['drafter', 'verifier', 'draftLength', 'visualTokens', 'reference', 'params', 'for']);

function check(spec: StrategySpec, kind: string, taken: Map<string, StrategySpec>): void {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(spec.name))
    throw new EngineError('INVALID_OPTIONS', `${kind} name "${spec.name}" must be lower-case words joined by "-"`);
  if (taken.has(spec.name)) throw new EngineError('INVALID_OPTIONS', `${kind} "${spec.name}" is already declared`);
  if (spec.params && (RESERVED.has(spec.name) || drafters.has(spec.name) || verifiers.has(spec.name))) {
    throw new EngineError(
      'INVALID_OPTIONS',
      `${kind} "${spec.name}" cannot take parameters: "decoding.${spec.name}" is taken`,
    );
  }
}

/** Add a drafter (before the schema and the CLI are built from the list, so they offer it). */
export function registerDrafter(spec: DrafterSpec): void {
  check(spec, 'drafter', drafters);
  drafters.set(spec.name, spec);
  version++;
}

export function registerVerifier(spec: VerifierSpec): void {
  check(spec, 'verifier', verifiers);
  verifiers.set(spec.name, spec);
  version++;
}

export const drafterSpecs = (): readonly DrafterSpec[] => [...drafters.values()];
export const verifierSpecs = (): readonly VerifierSpec[] => [...verifiers.values()];
export const drafterSpec = (name: string): DrafterSpec | undefined => drafters.get(name);
export const verifierSpec = (name: string): VerifierSpec | undefined => verifiers.get(name);
/** Changes whenever a strategy is added (what is derived from the list is rebuilt when it does). */
export const registryVersion = (): number => version;

/** Every strategy that takes parameters, by the name its parameters are sent under. */
export function parameterGroups(): { name: string; description: string; params: Readonly<Record<string, Knob>> }[] {
  return [...drafters.values(), ...verifiers.values()].flatMap((s) =>
    s.params ? [{ name: s.name, description: s.description, params: s.params }] : [],
  );
}

const BUILT_IN_DRAFTERS: DrafterSpec[] = [
  {
    name: 'none',
    description: 'No draft: plain autoregressive decoding, one token per forward (the baseline).',
    create: () => new NoDrafter(),
  },
  {
    name: 'ctc',
    needs: 'ctc',
    description: "The CTC head's greedy reading of the line, from the vision pass (the fastest measured).",
    create: (b) => new CtcDrafter(eos(b)),
  },
  {
    name: 'ngram',
    description: 'Continuations of the text so far found earlier in the same document (prompt lookup).',
    create: (b) => new NgramDrafter(eos(b)),
  },
  {
    name: 'reference',
    needsReference: true,
    description: "Continuations found in text the request supplies (a PDF's own text layer by default).",
    create: (b) => new ReferenceDrafter(eos(b)),
  },
  {
    name: 'mtp',
    needs: 'mtp',
    description: "The multi-token-prediction head: several next tokens from the decoder's hidden state.",
    create: (b) => new MtpDrafter(b),
  },
  {
    name: 'pmtp',
    needs: 'mtp',
    description: 'The MTP head with a confidence gate: each draft ends where the head is unsure.',
    create: (b) => new MtpDrafter(b, { head: 'pmtp', gate: PMTP_GATE }),
  },
  {
    name: 'routed',
    needs: 'mtp',
    description: 'The MTP head attending only to the visual tokens the decoder is reading.',
    create: (b) => new MtpDrafter(b, { route: ROUTED_KEEP }),
  },
  {
    name: 'diffusion',
    needs: 'diffusion',
    description: 'A block of masked positions filled in one forward, alongside the verification.',
    create: (b) => new DiffusionDrafter(eos(b)),
  },
  {
    name: 'dual-diffusion',
    needs: 'diffusion',
    description: 'Diffusion drafts with alternatives at their least confident positions (a tree).',
    create: (b) => new DiffusionDrafter(eos(b), { branches: DUAL_DIFFUSION_BRANCHES }),
  },
];
const BUILT_IN_VERIFIERS: VerifierSpec[] = [
  {
    name: 'greedy',
    lossless: true,
    description: 'Keeps a draft exactly as far as greedy decoding would have written it: lossless.',
    create: () => new GreedyVerifier(),
  },
  {
    name: 'tree',
    lossless: true,
    description: 'Greedy verification of a tree of alternatives in one forward: lossless.',
    create: () => new TreeVerifier(),
  },
  {
    name: 'relaxed',
    needsDraft: true,
    lineOnly: true,
    description:
      'Accepts a drafted token that is among the top-K and at least minRatio as likely as the best: lossy by design.',
    params: {
      topK: {
        type: 'int',
        min: 1,
        max: 100,
        default: 5,
        flag: 'top-k',
        description: "A drafted token is kept when it is among the model's K most likely.",
      },
      minRatio: {
        type: 'float',
        min: 0,
        minExclusive: true,
        max: 1,
        default: 0.3,
        flag: 'min-ratio',
        description: 'A drafted token is kept when it is at least this share as likely as the most likely one.',
      },
    },
    create: (_b, o) => new RelaxedVerifier(paramsOf<RelaxedParams>(o, 'relaxed')),
  },
  {
    name: 'joint',
    needs: 'ctc',
    lineOnly: true,
    description:
      'Commits the token that scores best under the decoder and the CTC head ' +
      'together (hybrid CTC/attention decoding): more accurate than greedy, ' +
      'and a different text.',
    params: {
      ctcWeight: {
        type: 'float',
        min: 0,
        max: 1,
        default: JOINT_CTC_WEIGHT,
        flag: 'ctc-weight',
        description: "The CTC head's share of the score (0: plain greedy).",
      },
    },
    create: (b, o) =>
      new JointVerifier(paramsOf<JointParams>(o, 'joint'), b.config.specialIds.eos, b.config.specialIds.ctcBlank),
  },
];
for (const spec of BUILT_IN_DRAFTERS) registerDrafter(spec);
for (const spec of BUILT_IN_VERIFIERS) registerVerifier(spec);

/** A fresh drafter and verifier for one request's resolved options. */
export function createStrategies(o: DecodingOptions, bundle: Bundle): { drafter: Drafter; verifier: Verifier } {
  const d = drafters.get(o.drafter);
  const v = verifiers.get(o.verifier);
  if (!d || !v)
    throw new EngineError(
      'INVALID_OPTIONS',
      `drafter "${o.drafter}" or verifier "${o.verifier}" is not declared in this process`,
    );
  return { drafter: d.create(bundle, o), verifier: v.create(bundle, o) };
}
