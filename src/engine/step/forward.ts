/**
 * The step's one decoder forward: every row's [last token, ...draft, ...mask blocks], padded to the widest row,
 * positioned by depth, masked by who may see whom; rows with a focal selection attend to their columns only.
 */
import { decoderStep } from '../decoder-step.js';
import { gatherVisual } from '../focal.js';
import { layoutRow } from '../row-layout.js';
import type { StepContext, StepRecord } from './record.js';

export async function forward(ctx: StepContext, rec: StepRecord): Promise<void> {
  const { seqs, drafts } = rec;
  const { pad, mask } = ctx.bundle.config.specialIds;
  const layout = drafts.map((d, r) => layoutRow(d, seqs[r].pos, ctx.positions));
  const t = Math.max(...layout.map((l) => l.width));
  const tokens = seqs.map((s, r) => {
    const row = [s.last, ...drafts[r].tokens, ...Array<number>(layout[r].masks).fill(mask)];
    return [...row, ...Array<number>(t - row.length).fill(pad)];
  });
  const positions = layout.map((l) => [...l.positions, ...Array<number>(t - l.positions.length).fill(l.positions[0])]);
  const attend = (r: number, i: number, j: number): boolean => layout[r].attend(i, j);
  const { nLayers, nHeads, headDim } = ctx.bundle.config.dims;
  rec.fullRows = seqs.map((s) => s.focal === null);
  const pruning = seqs.some((s) => !s.done && s.focal !== null);
  // A pruned forward's cost includes gathering its columns.
  const t0 = performance.now();
  const gathered = pruning ? gatherVisual(ctx.vis, seqs.map((s) => (s.done ? [0] : s.focal)), nLayers, nHeads, headDim, ctx.pool) : null;
  rec.out = await decoderStep(ctx.bundle, ctx.cache, gathered?.state ?? ctx.vis, { tokens, positions, attend });
  if (gathered) ctx.pool.give(gathered.state.k, gathered.state.v);
  rec.forwardMs = performance.now() - t0;
  rec.layout = layout;
  rec.width = t;
  rec.cols = gathered?.cols ?? null;
}
