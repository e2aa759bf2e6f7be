/**
 * Relaxed verification (Medusa's typical acceptance, simplified): a drafted token is kept when it is among
 * the model's top-k and its probability is at least `minRatio` times the top token's. Lossy by design: the
 * text can differ from greedy decoding, and the engine's metrics and eval report how much.
 */
import { argmax, type Draft, type RowLogits, type Verdict } from '../draft.js';
import type { Verifier } from './verifier.js';

export interface RelaxedParams {
  topK: number;
  minRatio: number;
}

function close(logits: Float32Array, token: number, p: RelaxedParams): boolean {
  const top = logits[argmax(logits)];
  const mine = logits[token];
  // p(token) / p(top) = exp(logit difference); no softmax needed.
  if (Math.exp(mine - top) < p.minRatio) return false;
  let higher = 0;
  for (const x of logits) if (x > mine) higher++;
  return higher < p.topK;
}

export class RelaxedVerifier implements Verifier {
  readonly name = 'relaxed';
  readonly lossless = false;
  readonly trees = false;

  constructor(readonly params: RelaxedParams) {}

  verify(draft: Draft, logits: RowLogits): Verdict {
    const accepted: number[] = [];
    let i = 0;
    for (; i < draft.tokens.length && close(logits.at(i), draft.tokens[i], this.params); i++) accepted.push(i);
    return { accepted, bonus: argmax(logits.at(i)) };
  }
}
