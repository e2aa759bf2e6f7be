/** Names to drafters and verifiers: the per-request choice vLLM makes once per server with an if/elif. */
import type { Bundle } from './bundle.js';
import { CtcDrafter } from './drafters/ctc.js';
import { DiffusionDrafter } from './drafters/diffusion.js';
import { MtpDrafter } from './drafters/mtp.js';
import type { Drafter } from './drafters/drafter.js';
import { NgramDrafter } from './drafters/ngram.js';
import { NoDrafter } from './drafters/none.js';
import { ReferenceDrafter } from './drafters/reference.js';
import { EngineError } from './errors.js';
import type { DecodingOptions } from './options.js';
import { GreedyVerifier } from './verifiers/greedy.js';
import { JointVerifier } from './verifiers/joint.js';
import { RelaxedVerifier } from './verifiers/relaxed.js';
import { TreeVerifier } from './verifiers/tree.js';
import type { Verifier } from './verifiers/verifier.js';

/** pmtp's confidence gate: a draft ends where the head's top probability falls below this. */
export const PMTP_GATE = 0.5;
/** routed: the share of a line's visual tokens the MTP head attends to. */
export const ROUTED_KEEP = 0.2;
/** dual-diffusion: alternatives at up to this many of the draft's least confident positions. */
export const DUAL_DIFFUSION_BRANCHES = 2;

/** A fresh drafter for one request (drafters keep per-line state). */
export function createDrafter(o: DecodingOptions, bundle: Bundle): Drafter {
  const { config } = bundle;
  const eos = config.specialIds.eos;
  switch (o.drafter) {
    case 'none':
      return new NoDrafter();
    case 'ctc':
      return new CtcDrafter(eos);
    case 'ngram':
      return new NgramDrafter(eos);
    case 'reference':
      return new ReferenceDrafter(eos);
    case 'mtp':
      return new MtpDrafter(bundle);
    case 'pmtp':
      return new MtpDrafter(bundle, { head: 'pmtp', gate: PMTP_GATE });
    case 'routed':
      return new MtpDrafter(bundle, { route: ROUTED_KEEP });
    case 'diffusion':
      return new DiffusionDrafter(eos);
    case 'dual-diffusion':
      return new DiffusionDrafter(eos, { branches: DUAL_DIFFUSION_BRANCHES });
    default:
      // Unreachable: every drafter name has a case above (kept for names added to DRAFTERS later).
      throw new EngineError('INVALID_OPTIONS', `drafter "${o.drafter}" is not available with bundle "${config.name}"`);
  }
}

export function createVerifier(o: DecodingOptions, bundle: Bundle): Verifier {
  switch (o.verifier) {
    case 'greedy':
      return new GreedyVerifier();
    case 'tree':
      return new TreeVerifier();
    case 'relaxed':
      return new RelaxedVerifier(o.relaxed);
    case 'joint':
      return new JointVerifier(o.joint, bundle.config.specialIds.eos, bundle.config.specialIds.ctcBlank);
  }
}
