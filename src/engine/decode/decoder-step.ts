/**
 * One decoder forward over a batch of rows, each bringing T new tokens (padded to a common T), against the
 * static text cache and the visual K/V. The additive bias says, per new token, which cache slots and which
 * new tokens it may see: causal for a chain, ancestors for a tree, a block for diffusion.
 */
import * as ort from 'onnxruntime-node';
import type { Bundle } from '../bundle/bundle.js';
import type { KvCache } from './kv-cache.js';
import type { VisualState } from '../vision/visual-state.js';

export interface StepInput {
  tokens: number[][]; // [B][T]
  positions: number[][]; // [B][T]
  /** attend(b, i, j): may new token i of row b see new token j? Defaults to causal. */
  attend?: (b: number, i: number, j: number) => boolean;
  /**
   * Which optional outputs to fetch (default both): the hidden state (drafting heads start from it) and the
   * focal layers' visual attention (focal pruning, routed drafting). Left out, they come back empty, and the
   * forward makes none of their garbage (at 8 rows of 33 tokens, a quarter of a forward's output bytes).
   */
  fetch?: { hidden?: boolean; visAttn?: boolean };
  /**
   * Which visual tokens each new token sees, [B, T, V] (focal pruning while verifying a draft: each drafted position
   * its own window); left out, every new token of a row sees its row's `vis.mask`. Only for a graph that
   * takesPositionMask.
   */
  visMask?: Float32Array;
}

export interface StepOutput {
  logits: Float32Array; // [B, T, vocab]
  hidden: Float32Array; // [B, T, d]; empty when not fetched
  newK: Float32Array; // [L, B, H, T, dh]
  newV: Float32Array;
  visAttn: Float32Array; // [B, T, V]; empty when not fetched
  t: number;
  vocab: number;
}

const causal = (_b: number, i: number, j: number): boolean => j <= i;

/**
 * A stacked K/V tensor [L, ...rest] as the decoder graph takes it: one input per layer (`vis_k_0` ...), each a view
 * of the stacked buffer so nothing is copied (training/layer_inputs.py), or the stacked tensor for a graph exported
 * before that (which copies it whole on every forward).
 */
export function kvFeeds(
  session: ort.InferenceSession,
  name: string,
  data: Float32Array,
  dims: readonly number[],
): Record<string, ort.Tensor> {
  if (!session.inputNames.includes(`${name}_0`)) return { [name]: new ort.Tensor('float32', data, [...dims]) };
  const [layers, ...rest] = dims;
  const per = rest.reduce((a, b) => a * b, 1);
  const feeds: Record<string, ort.Tensor> = {};
  for (let l = 0; l < layers; l++)
    feeds[`${name}_${l}`] = new ort.Tensor('float32', data.subarray(l * per, (l + 1) * per), rest);
  return feeds;
}

const positionMasks = new WeakMap<ort.InferenceSession, boolean>();

/**
 * Does this decoder take its visual mask per new token ([B, 1 | T, V]: training/position_mask.py) rather than per
 * row ([B, V], graphs exported before it)?
 */
export function takesPositionMask(session: ort.InferenceSession): boolean {
  let yes = positionMasks.get(session);
  if (yes === undefined) {
    const meta = session.inputMetadata.find((m) => m.name === 'vis_mask');
    yes = meta !== undefined && meta.isTensor && meta.shape.length === 3;
    positionMasks.set(session, yes);
  }
  return yes;
}

export async function decoderStep(
  bundle: Bundle,
  cache: KvCache,
  vis: VisualState,
  input: StepInput,
): Promise<StepOutput> {
  const b = cache.batch;
  const t = input.tokens[0].length;
  const c = cache.capacity;
  const neg = bundle.config.decoding.negativeBias;
  const attend = input.attend ?? causal;
  const tokens = new BigInt64Array(b * t);
  const positions = new BigInt64Array(b * t);
  const bias = new Float32Array(b * t * (c + t));
  for (let r = 0; r < b; r++) {
    const len = cache.lengths[r];
    for (let i = 0; i < t; i++) {
      tokens[r * t + i] = BigInt(input.tokens[r][i]);
      positions[r * t + i] = BigInt(input.positions[r][i]);
      const row = (r * t + i) * (c + t);
      bias.fill(neg, row + len, row + c);
      for (let j = 0; j < t; j++) if (!attend(r, i, j)) bias[row + c + j] = neg;
    }
  }
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  const visDims = [nLayers, b, nHeads, vis.visual, headDim];
  const session = bundle.decoder;
  const fetches = ['logits', 'new_k', 'new_v'];
  if (input.fetch?.hidden ?? true) fetches.push('hidden');
  if (input.fetch?.visAttn ?? true) fetches.push('vis_attn');
  const out = await session.run(
    {
      tokens: new ort.Tensor('int64', tokens, [b, t]),
      positions: new ort.Tensor('int64', positions, [b, t]),
      ...kvFeeds(session, 'cache_k', cache.k, cache.dims),
      ...kvFeeds(session, 'cache_v', cache.v, cache.dims),
      ...kvFeeds(session, 'vis_k', vis.k, visDims),
      ...kvFeeds(session, 'vis_v', vis.v, visDims),
      vis_mask: visMaskFeed(session, vis, input.visMask, t),
      attn_bias: new ort.Tensor('float32', bias, [b, t, c + t]),
    },
    fetches,
  );
  return {
    logits: out.logits.data as Float32Array,
    hidden: (out.hidden?.data as Float32Array | undefined) ?? new Float32Array(0),
    newK: out.new_k.data as Float32Array,
    newV: out.new_v.data as Float32Array,
    visAttn: (out.vis_attn?.data as Float32Array | undefined) ?? new Float32Array(0),
    t,
    vocab: bundle.config.dims.vocabSize,
  };
}

/**
 * The visual mask as the graph takes it: per row ([B, V]), or per new token ([B, 1, V] shared, [B, T, V] each its own).
 */
function visMaskFeed(
  session: ort.InferenceSession,
  vis: VisualState,
  perToken: Float32Array | undefined,
  t: number,
): ort.Tensor {
  if (!takesPositionMask(session)) {
    if (perToken) throw new Error('this decoder graph takes one visual mask per row, not per new token');
    return new ort.Tensor('float32', vis.mask, [vis.batch, vis.visual]);
  }
  return perToken
    ? new ort.Tensor('float32', perToken, [vis.batch, t, vis.visual])
    : new ort.Tensor('float32', vis.mask, [vis.batch, 1, vis.visual]);
}
