/**
 * Parity check of a bundle against its golden.json: fixed inputs, the outputs PyTorch gave at export.
 * The exporter runs it before accepting a bundle, and CI runs it on every committed bundle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { type Bundle, HEAD_FILES } from './bundle.js';
import { EngineError } from '../errors.js';
import { decodeGreedy } from '../decode/greedy.js';
import { KvCache } from '../decode/kv-cache.js';
import { kvFeeds, takesPositionMask } from '../decode/decoder-step.js';
import { ctcLogSoftmax } from '../ctc/head.js';
import { runVision, type VisualState } from '../vision/visual-state.js';

interface Packed {
  shape: number[];
  data: string; // base64 float32 little-endian
}

interface Golden {
  tolerance: number;
  vision: {
    inputs: { pixels: Packed; widths: number[]; lines?: number[] };
    expected: { ctc_logits: Packed; vis_mask: number[][]; vis_k_sum: number; vis_v_sum: number };
  };
  prefill: {
    inputs: { tokens: number[][]; positions: number[][]; cache: number; attn_bias: Packed };
    expected: Record<'logits' | 'hidden' | 'new_k' | 'new_v' | 'vis_attn', Packed>;
  };
  /**
   * The prefill again, each new token seeing a window of its own (vis_mask [B, T, V]: focal pruning's per-position
   * mask).
   */
  windowed?: {
    inputs: { vis_mask: Packed };
    expected: Record<'logits' | 'vis_attn', Packed>;
  };
  step: {
    inputs: { tokens: number[][]; positions: number[][]; attn_bias: Packed };
    expected: Record<'logits' | 'vis_attn', Packed>;
  };
  greedy: { texts: string[]; labels: string[] };
  /** The MTP and P-MTP heads, where the bundle has them: one depth on fixed inputs. */
  mtp?: HeadGolden;
  pmtp?: HeadGolden;
}

interface HeadGolden {
  inputs: { state: Packed; token: number[]; position: number[]; vis_k: Packed; vis_v: Packed; vis_mask: Packed };
  outputs: { logits: Packed; next_state: Packed };
}

/** How far the int8 vision graph's row means may be from the float model's. */
const MEAN_TOLERANCE_INT8 = 0.02;

/** Arrays one after another in one. */
function joined(rows: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(rows.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of rows) {
    out.set(r, at);
    at += r.length;
  }
  return out;
}

/** A [B, V, vocab] array with its padding frames (mask 0) zeroed. */
function realFrames(x: Float32Array, mask: Float32Array): Float32Array {
  const vocab = x.length / mask.length;
  const out = x.slice();
  mask.forEach((m, f) => {
    if (m === 0) out.fill(0, f * vocab, (f + 1) * vocab);
  });
  return out;
}

export interface GoldenReport {
  checks: { name: string; maxAbsDiff: number }[];
  texts: string[];
}

function unpack(p: Packed): Float32Array {
  const buf = Buffer.from(p.data, 'base64');
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

function maxDiff(a: Float32Array, b: Float32Array, name: string, file: string): number {
  if (a.length !== b.length)
    throw new EngineError('GOLDEN_MISMATCH', `${name}: ${a.length} values, golden has ${b.length}`, file);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const sum = (a: Float32Array): number => a.reduce((s, x) => s + x, 0);
const sumAbs = (a: Float32Array): number => a.reduce((s, x) => s + Math.abs(x), 0);

/** Compare `got` with `want`, record the difference, and throw past `tol` (default golden.json's tolerance). */
type Expect = (name: string, got: Float32Array, want: Float32Array, tol?: number) => void;

function expecter(checks: GoldenReport['checks'], file: string, tolerance: number): Expect {
  return (name, got, want, tol = tolerance) => {
    const d = maxDiff(got, want, name, file);
    checks.push({ name, maxAbsDiff: d });
    if (!(d <= tol))
      throw new EngineError(
        'GOLDEN_MISMATCH',
        `${name} differs from golden by ${d} (tolerance ${tol}) in ${file}`,
        file,
      );
  };
}

export async function checkGolden(bundle: Bundle): Promise<GoldenReport> {
  const file = join(bundle.dir, bundle.config.golden);
  const g = JSON.parse(readFileSync(file, 'utf8')) as Golden;
  const checks: GoldenReport['checks'] = [];
  // The int8 vision graph answers to its own tolerance (config.json's int8.tolerance, set by
  // training/quantize.py from what it measured), and so do the decoder's outputs, which carry its error; the
  // float graphs to golden.json's. The drafter heads read only their own golden inputs: golden.json's tolerance.
  const int8 = bundle.precision === 'int8' ? bundle.config.int8?.tolerance : undefined;
  const expect = expecter(checks, file, g.tolerance);
  const vis = await checkVision(bundle, g, expect, int8);
  await checkDecoder(bundle, g, vis, expect, int8?.decoder ?? g.tolerance, file);
  await checkHeads(bundle, g, expect, file);
  const texts = await checkGreedy(bundle, g, vis, file);
  return { checks, texts };
}

/** The vision pass on golden.json's pixels: CTC logits and means, mask, and the visual K/V's sums. */
async function checkVision(
  bundle: Bundle,
  g: Golden,
  expect: Expect,
  int8: { vision: number } | undefined,
): Promise<VisualState> {
  const visionTol = int8?.vision ?? g.tolerance;
  const sumTol = int8 ? int8.vision : 1e-4;
  const px = g.vision.inputs.pixels;
  const pixels = unpack(px);
  const vis = await runVision(bundle, {
    pixels: {
      pixels,
      widths: BigInt64Array.from(g.vision.inputs.widths, (w) => BigInt(w)),
      ...(g.vision.inputs.lines ? { lines: BigInt64Array.from(g.vision.inputs.lines, (l) => BigInt(l)) } : {}),
      batch: px.shape[0],
      width: px.shape[3],
    },
  });
  // The pass hands out the head's log-probabilities: the expected logits are compared normalised the same way, on
  // each row's real frames (what a padding frame holds differs between graphs that normalise and those that do not).
  const wantMask = Float32Array.from(g.vision.expected.vis_mask.flat());
  const wantCtc = unpack(g.vision.expected.ctc_logits);
  const wantMeans = ctcLogSoftmax(wantCtc, wantMask, px.shape[0], vis.visual);
  expect('vision.ctc_logits', realFrames(vis.ctcLogProbs, wantMask), realFrames(wantCtc, wantMask), visionTol);
  // Each row's mean distribution over its frames (the script gate's input), from the graph or worked out here: a
  // probability, so the int8 graph's logit tolerance says nothing of it (measured 4.3e-3 there, 9e-8 in float).
  const means = vis.reads?.map((r) => r.mean ?? new Float32Array(0)) ?? [];
  expect('vision.ctc_mean', joined(means), joined(wantMeans), int8 ? MEAN_TOLERANCE_INT8 : g.tolerance);
  expect('vision.vis_mask', vis.mask, wantMask, 0);
  // Relative to the sum of the values' sizes: a sum's rounding grows with its terms, not with what they cancel to.
  const relSum = (got: Float32Array, want: number): number =>
    Math.abs(sum(got) - want) / Math.max(1, Math.abs(want), sumAbs(got));
  expect('vision.vis_k_sum', Float32Array.of(relSum(vis.k, g.vision.expected.vis_k_sum)), Float32Array.of(0), sumTol);
  expect('vision.vis_v_sum', Float32Array.of(relSum(vis.v, g.vision.expected.vis_v_sum)), Float32Array.of(0), sumTol);
  return vis;
}

/** The decoder on golden.json's prefill, windowed prefill (where the decoder takes one) and step. */
async function checkDecoder(
  bundle: Bundle,
  g: Golden,
  vis: VisualState,
  expect: Expect,
  decoderTol: number,
  file: string,
): Promise<void> {
  const { nLayers: L, nHeads: H, headDim: dh } = bundle.config.dims;
  const B = g.vision.inputs.pixels.shape[0];
  const perToken = takesPositionMask(bundle.decoder);
  if (perToken !== Boolean(g.windowed)) {
    throw new EngineError(
      'GOLDEN_MISMATCH',
      perToken
        ? `the decoder takes a visual mask per new token but golden.json has no ` +
            `windowed case (training/position_mask.py --bundle) (${file})`
        : `golden.json has a windowed case but the decoder takes one visual mask per row (${file})`,
      file,
    );
  }
  const run = async (
    tokens: number[][],
    positions: number[][],
    cacheK: Float32Array,
    cacheV: Float32Array,
    c: number,
    bias: Packed,
    mask?: Packed,
  ) => {
    const t = tokens[0].length;
    const visDims = [L, B, H, vis.visual, dh];
    const session = bundle.decoder;
    return session.run({
      tokens: new ort.Tensor('int64', BigInt64Array.from(tokens.flat(), BigInt), [B, t]),
      positions: new ort.Tensor('int64', BigInt64Array.from(positions.flat(), BigInt), [B, t]),
      ...kvFeeds(session, 'cache_k', cacheK, [L, B, H, c, dh]),
      ...kvFeeds(session, 'cache_v', cacheV, [L, B, H, c, dh]),
      ...kvFeeds(session, 'vis_k', vis.k, visDims),
      ...kvFeeds(session, 'vis_v', vis.v, visDims),
      vis_mask: mask
        ? new ort.Tensor('float32', unpack(mask), mask.shape)
        : new ort.Tensor('float32', vis.mask, perToken ? [B, 1, vis.visual] : [B, vis.visual]),
      attn_bias: new ort.Tensor('float32', unpack(bias), bias.shape),
    });
  };
  const c = g.prefill.inputs.cache;
  const empty = new Float32Array(L * B * H * c * dh);
  const pre = await run(
    g.prefill.inputs.tokens,
    g.prefill.inputs.positions,
    empty,
    empty,
    c,
    g.prefill.inputs.attn_bias,
  );
  for (const name of ['logits', 'hidden', 'new_k', 'new_v', 'vis_attn'] as const) {
    expect(`prefill.${name}`, pre[name].data as Float32Array, unpack(g.prefill.expected[name]), decoderTol);
  }
  if (g.windowed) {
    const win = await run(
      g.prefill.inputs.tokens,
      g.prefill.inputs.positions,
      empty,
      empty,
      c,
      g.prefill.inputs.attn_bias,
      g.windowed.inputs.vis_mask,
    );
    for (const name of ['logits', 'vis_attn'] as const)
      expect(`windowed.${name}`, win[name].data as Float32Array, unpack(g.windowed.expected[name]), decoderTol);
  }
  // The engine's own cache writer puts the prefill's K/V into slots 0..T-1, as the golden step expects.
  const cache = new KvCache(L, H, dh, B, c);
  const t = g.prefill.inputs.tokens[0].length;
  const all = Array.from({ length: t }, (_, i) => i);
  cache.commit(
    pre.new_k.data as Float32Array,
    pre.new_v.data as Float32Array,
    t,
    g.prefill.inputs.tokens.map(() => all),
  );
  const step = await run(g.step.inputs.tokens, g.step.inputs.positions, cache.k, cache.v, c, g.step.inputs.attn_bias);
  expect('step.logits', step.logits.data as Float32Array, unpack(g.step.expected.logits), decoderTol);
  expect('step.vis_attn', step.vis_attn.data as Float32Array, unpack(g.step.expected.vis_attn), decoderTol);
}

/** Each drafter head on its own golden inputs, where the bundle has the head or its golden. */
async function checkHeads(bundle: Bundle, g: Golden, expect: Expect, file: string): Promise<void> {
  for (const head of HEAD_FILES) {
    const golden = g[head];
    const session = await bundle[head]?.session();
    if (!golden && !session) continue;
    if (!golden || !session)
      throw new EngineError(
        'GOLDEN_MISMATCH',
        `the bundle has ${session ? `a ${head} head but no golden for it` : `a ${head} golden but no head`} (${file})`,
        file,
      );
    const m = golden.inputs;
    const t = (p: Packed): ort.Tensor => new ort.Tensor('float32', unpack(p), p.shape);
    const out = await session.run({
      state: t(m.state),
      token: new ort.Tensor('int64', BigInt64Array.from(m.token, BigInt), [m.token.length]),
      position: new ort.Tensor('int64', BigInt64Array.from(m.position, BigInt), [m.position.length]),
      vis_k: t(m.vis_k),
      vis_v: t(m.vis_v),
      vis_mask: t(m.vis_mask),
    });
    expect(`${head}.logits`, out.logits.data as Float32Array, unpack(golden.outputs.logits));
    expect(`${head}.next_state`, out.next_state.data as Float32Array, unpack(golden.outputs.next_state));
  }
}

/** Greedy decoding of the golden lines: the texts must be PyTorch's, exactly. */
async function checkGreedy(bundle: Bundle, g: Golden, vis: VisualState, file: string): Promise<string[]> {
  const greedy = await decodeGreedy(bundle, vis);
  const texts = greedy.ids.map((ids) => bundle.tokenizer.decode(ids));
  texts.forEach((text, i) => {
    if (text !== g.greedy.texts[i]) {
      throw new EngineError(
        'GOLDEN_MISMATCH',
        `greedy text of golden line ${i} is ${JSON.stringify(text)}, PyTorch ` +
          `gave ${JSON.stringify(g.greedy.texts[i])} (${file})`,
        file,
      );
    }
  });
  return texts;
}
