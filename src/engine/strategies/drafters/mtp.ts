/**
 * MTP drafting (after FastMTP): the bundle's small MTP block, shared across depths and applied recursively,
 * starts from the decoder's hidden state at the position that decided the last token and looks at the line
 * through the decoder's last-layer visual keys/values (already computed: drafting adds no vision work). Each
 * depth is one batched run of mtp.onnx over every line that drafts this step.
 *
 * `pmtp` (after P-MTP) runs the bundle's P-MTP head where it has one: the same contract, trained deeper with
 * P-MTP's curriculum (training/mtp.py), and behind a confidence gate: a line's draft ends at the first depth whose
 * top probability falls below the gate, so each line's draft length follows how sure the head is there. A bundle
 * without that head gates its MTP head instead. Routed (`routed`, after TIGER), the head
 * sees only the visual tokens around where the decoder was reading, not the whole line.
 */
import * as ort from 'onnxruntime-node';
import type { Bundle, DrafterHead } from '../../bundle/bundle.js';
import type { HeadSession } from '../../bundle/head-session.js';
import { argmax, type Draft, probability } from '../draft.js';
import { nextSelection } from '../../decode/focal.js';
import type { Drafter, SequenceView } from './drafter.js';

export interface MtpOptions {
  /** Which of the bundle's heads drafts: `pmtp` falls back to the MTP head where the bundle has no P-MTP head. */
  head?: DrafterHead;
  /** pmtp: stop a line's draft where the head's top probability drops below this (0: never). */
  gate?: number;
  /**
   * routed (after TIGER): the head attends only to this share of the line's visual tokens, chosen from where the
   * decoder was reading when it decided the last token (its focal layers' attention: fixations and their
   * neighbours, rightward first). 0: the whole line.
   */
  route?: number;
}

export class MtpDrafter implements Drafter {
  readonly name: string;
  readonly usesHiddenState = true;
  readonly usesAttention: boolean;
  private readonly route: number;
  private readonly session: HeadSession;
  private readonly eos: number;
  private readonly gate: number;
  /** Depths beyond the trained ones still draft, but rarely pay: stop at twice the trained depth. */
  private readonly maxDepth: number;
  readonly gatedDepth?: number;
  private readonly heads: number;
  private readonly headDim: number;
  private readonly maxPosition: number;

  constructor(bundle: Bundle, opts: MtpOptions = {}) {
    const head = opts.head === 'pmtp' && bundle.pmtp && bundle.config.pmtp ? 'pmtp' : 'mtp';
    const session = bundle[head];
    const trained = bundle.config[head];
    if (!session || !trained) throw new Error(`bundle "${bundle.config.name}" has no MTP head`);
    this.session = session;
    this.eos = bundle.config.specialIds.eos;
    this.gate = opts.gate ?? 0;
    this.route = opts.route ?? 0;
    this.usesAttention = this.route > 0;
    this.name = this.route > 0 ? 'routed' : this.gate > 0 ? 'pmtp' : 'mtp';
    this.maxDepth = 2 * trained.depth;
    // P-MTP's dynamic length: the gate ends each line's draft, so `auto` drafts as deep as the head goes.
    if (this.gate > 0) this.gatedDepth = this.maxDepth;
    this.heads = bundle.config.dims.nHeads;
    this.headDim = bundle.config.dims.headDim;
    this.maxPosition = bundle.config.dims.maxText - 1;
  }

  /** The line's visual mask narrowed to the routed selection (the whole line until there is attention to route by). */
  private routedMask(lineMask: Float32Array, attention: Float32Array | null): Float32Array {
    if (!attention) return lineMask;
    let real = 0;
    while (real < lineMask.length && lineMask[real] > 0) real++;
    const indices = Array.from({ length: real }, (_, i) => i);
    const chosen = nextSelection(
      indices,
      indices.map((i) => attention[i]),
      real,
      this.route,
    );
    const out = new Float32Array(lineMask.length);
    for (const c of chosen) out[c] = 1;
    return out;
  }

  async propose(seqs: readonly SequenceView[]): Promise<Draft[]> {
    const drafts: Draft[] = seqs.map(() => ({ tokens: [] }));
    const rows = seqs
      .map((s, i) => i)
      .filter((i) => seqs[i].budget > 0 && seqs[i].hidden !== null && seqs[i].tokens.length > 0);
    if (!rows.length) return drafts;
    const vis = rows.map((i) => seqs[i].lastLayerVisual());
    const per = vis[0].k.length; // H * V * dh, the same for every line of the batch (padded to one V)
    const visual = vis[0].visual;
    const n = rows.length;
    const d = (seqs[rows[0]].hidden as Float32Array).length;
    const k = new Float32Array(n * per);
    const v = new Float32Array(n * per);
    const mask = new Float32Array(n * visual);
    let state: Float32Array = new Float32Array(n * d);
    rows.forEach((i, j) => {
      k.set(vis[j].k, j * per);
      v.set(vis[j].v, j * per);
      mask.set(this.route > 0 ? this.routedMask(vis[j].mask, seqs[i].attention) : vis[j].mask, j * visual);
      state.set(seqs[i].hidden as Float32Array, j * d);
    });
    const shapeKV = [n, this.heads, visual, this.headDim];
    const token = rows.map((i) => seqs[i].tokens[seqs[i].tokens.length - 1]);
    const position = rows.map((i) => seqs[i].position);
    const live = rows.map(() => true);
    const kT = new ort.Tensor('float32', k, shapeKV);
    const vT = new ort.Tensor('float32', v, shapeKV);
    const mT = new ort.Tensor('float32', mask, [n, visual]);
    const depth = Math.min(this.maxDepth, Math.max(...rows.map((i) => seqs[i].budget)));
    const session = await this.session.session();
    for (let step = 0; step < depth && live.some(Boolean); step++) {
      const out = await session.run({
        state: new ort.Tensor('float32', state, [n, d]),
        token: new ort.Tensor('int64', BigInt64Array.from(token.map(BigInt)), [n]),
        position: new ort.Tensor(
          'int64',
          BigInt64Array.from(position.map((p) => BigInt(Math.min(p, this.maxPosition)))),
          [n],
        ),
        vis_k: kT,
        vis_v: vT,
        vis_mask: mT,
      });
      const logits = out.logits.data as Float32Array;
      const vocab = logits.length / n;
      state = out.next_state.data as Float32Array;
      rows.forEach((i, j) => {
        if (!live[j]) return;
        const row = logits.subarray(j * vocab, (j + 1) * vocab);
        const next = argmax(row);
        if (this.gate > 0 && probability(row, next) < this.gate) {
          live[j] = false;
          return;
        }
        drafts[i].tokens.push(next);
        token[j] = next;
        position[j] += 1;
        if (next === this.eos || drafts[i].tokens.length >= seqs[i].budget) live[j] = false;
      });
    }
    return drafts;
  }
}
